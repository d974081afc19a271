package handlers

import (
	"context"
	"fmt"
	"maps"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apictl/apictl/pkg/patch"
	"github.com/apictl/apictl/pkg/registry"
	"github.com/apictl/apictl/pkg/registry/crschema"
	"github.com/apictl/apictl/pkg/routes"
	"github.com/apictl/apictl/pkg/storage"
)

// Extension is what the handlers serve of one CustomResourceDefinition: the scopes of its resource
// at every served version and of their subresources. It is built once per change of the CRD, off
// the request path, with its own rules, patcher and table printers, so that installing one CRD never
// rebuilds what the others or the built-in kinds need.
type Extension struct {
	scopes map[scopeKey]*scope
}

// ExtensionConfig is what an Extension is built from.
type ExtensionConfig struct {
	// API holds the CRD's group with the CRD's resource at each served version, and nothing else.
	API *routes.API
	// Store holds the objects: the resource's watch cache.
	Store storage.Store
	// CustomResources has the schemas of the CRD's versions.
	CustomResources *crschema.Set
	// Terminating refuses creates, as kube does while a CRD's instances are being deleted.
	Terminating bool
	// CRD is the definition served, for the conversion of its objects between its versions; nil
	// serves objects as they are stored.
	CRD *apiextensionsv1.CustomResourceDefinition
}

// NewExtension builds the scopes of one CRD's resource.
func (a *API) NewExtension(c ExtensionConfig) (*Extension, error) {
	reg, err := registry.New(c.API)
	if err != nil {
		return nil, fmt.Errorf("building the rules of the custom resource: %w", err)
	}
	patcher, err := patch.New(c.API)
	if err != nil {
		return nil, fmt.Errorf("building the patcher of the custom resource: %w", err)
	}
	conv, err := a.conversions.Converter(c.CRD)
	if err != nil {
		return nil, err
	}
	e := &Extension{scopes: map[scopeKey]*scope{}}
	if err := a.addScopes(e.scopes, scopeSource{api: c.API, registry: reg, patcher: patcher, customResources: c.CustomResources,
		storeOf: func(schema.GroupResource) storage.Store { return c.Store }, conv: conv, terminating: c.Terminating}); err != nil {
		return nil, err
	}
	return e, nil
}

// SetExtensions makes exts, with the built-in resources, what the handlers serve. Requests already
// running finish with the scope they started with.
func (a *API) SetExtensions(exts []*Extension) {
	all := maps.Clone(a.builtin)
	for _, e := range exts {
		maps.Copy(all, e.scopes)
	}
	a.scopes.Store(&all)
}

// DeleteAll deletes every object of the extension's resource, as kube's CRD finalizer does: objects
// with finalizers are marked for deletion and left to them. It returns how many objects it found, so
// that the caller calls again until none is left.
func (e *Extension) DeleteAll(ctx context.Context) (int, error) {
	var main *scope
	for key, s := range e.scopes {
		if key.subresource == "" {
			main = s
			break
		}
	}
	if main == nil {
		return 0, nil
	}
	res, err := main.Backend.List(ctx, main.Prefix(""), storage.ListOptions{})
	if err != nil {
		return 0, fmt.Errorf("listing %s: %w", main.GR, err)
	}
	for _, kv := range res.Items {
		if _, err := main.api.deleteStored(ctx, main, kv.Key); err != nil {
			return len(res.Items), fmt.Errorf("deleting %s: %w", kv.Key, err)
		}
	}
	return len(res.Items), nil
}
