package handlers

import (
	"fmt"
	"net/http"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apictl/apictl/pkg/kinds"
	"github.com/apictl/apictl/pkg/patch"
	"github.com/apictl/apictl/pkg/registry"
	"github.com/apictl/apictl/pkg/registry/crconvert"
	"github.com/apictl/apictl/pkg/registry/crschema"
	"github.com/apictl/apictl/pkg/registry/tables"
	"github.com/apictl/apictl/pkg/routes"
	"github.com/apictl/apictl/pkg/serve/store"
	"github.com/apictl/apictl/pkg/storage"
)

// scopeSource is what the scopes of an API are installed from: the server's built-in API, or one
// CRD's (NewExtension).
type scopeSource struct {
	api      *routes.API
	registry *registry.Registry
	patcher  *patch.Patcher
	// customResources has the schemas of the API's custom resources.
	customResources *crschema.Set
	// storeOf holds the objects of a resource.
	storeOf func(schema.GroupResource) storage.Store
	// conv converts the objects of a CRD with several versions; nil when none need converting.
	conv *crconvert.Converter
	// terminating refuses creates, as kube does while a CRD's instances are being deleted.
	terminating bool
}

// scopeSpec is everything a route's scope is made from; newScope chooses its variants from it once.
type scopeSpec struct {
	res      *routes.Resource
	sub      *routes.Subresource // nil for the resource itself
	gvr      schema.GroupVersionResource
	strategy *registry.Strategy
	backend  storage.Store
	patcher  *patch.Patcher
	table    *tables.Converter
	crv      *crschema.Validator
	conv     *crconvert.Converter
	// terminating is set on the routes of a CRD being deleted.
	terminating bool
}

// addScopes adds to dst a scope for every stored resource of src's API and for each of its
// subresources.
func (a *API) addScopes(dst map[scopeKey]*scope, src scopeSource) error {
	converters, err := tables.ForAPI(src.api, tables.WithClock(a.cfg.Now))
	if err != nil {
		return fmt.Errorf("building the table printers: %w", err)
	}
	for _, g := range src.api.Groups() {
		for _, v := range g.Versions {
			for i := range v.Resources {
				res := &v.Resources[i]
				if res.CreateOnly() {
					continue // answered by its Creater (newCreateRoutes)
				}
				gvr := schema.GroupVersionResource{Group: g.Name, Version: v.Name, Resource: res.Plural}
				strategy, ok := src.registry.Strategy(gvr)
				if !ok {
					return fmt.Errorf("no registry rules for %s", gvr)
				}
				storedAs := gvr.GroupResource()
				if res.StoredAs != nil {
					storedAs = res.StoredAs.GroupResource() // one watch cache for the objects of both APIs
				}
				spec := scopeSpec{res: res, gvr: gvr, strategy: strategy, backend: src.storeOf(storedAs), patcher: src.patcher,
					table: converters[gvr], conv: src.conv, terminating: src.terminating}
				if res.Custom && src.customResources != nil {
					spec.crv, _ = src.customResources.Validator(gvr)
				}
				dst[scopeKey{g.Name, v.Name, res.Plural, ""}] = a.newScope(spec)
				for j := range res.Subresources {
					spec.sub = &res.Subresources[j]
					dst[scopeKey{g.Name, v.Name, res.Plural, spec.sub.Name}] = a.newScope(spec)
				}
			}
		}
	}
	return nil
}

// newScope makes the scope of one route, choosing once how its stored objects are read (its form)
// and, through store.New, how its writes are checked.
func (a *API) newScope(spec scopeSpec) *scope {
	res, sub, gvr, strategy := spec.res, spec.sub, spec.gvr, spec.strategy
	r := &store.Resource{
		Patcher: spec.patcher, Res: res, Sub: sub, Strategy: strategy, Backend: spec.backend, GVR: gvr, GR: gvr.GroupResource(),
		Storage: gvr.GroupResource(), ObjectGVK: gvr.GroupVersion().WithKind(res.Kind), Form: store.AsStored{},
		Crv: spec.crv, Conv: spec.conv, Terminating: spec.terminating,
	}
	if r.Patcher == nil {
		r.Patcher = a.patcher
	}
	if r.Crv == nil && res.Custom {
		r.Crv, _ = a.cfg.CustomResources.Validator(gvr)
	}
	if sub != nil {
		r.ObjectGVK = sub.GroupVersionKind(gvr.GroupVersion())
	}
	if res.StoredAs != nil {
		r.Storage = res.StoredAs.GroupResource()
	}
	var stored *kinds.StoredForm
	var selectable *kinds.FieldSelectors
	if strategy != nil {
		selectable = strategy.Fields
		rules := strategy.StoreRules()
		r.AllowCreateOnUpdate = rules.AllowCreateOnUpdate && sub == nil
		if rules.ExpireAfterEventTTL {
			r.TTL = a.cfg.EventTTL
		}
	}
	switch {
	case spec.conv != nil:
		r.Form = store.NewCRDVersions(spec.conv, gvr.Version, res.Kind)
	case strategy != nil && sub == nil && strategy.Stored != nil:
		stored = strategy.Stored
		r.Form = store.NewStoredAs(strategy.Stored, strategy.GVK, res.Kind, r.ObjectGVK)
	}
	s := &resource{Resource: r, api: a, listKind: res.ListKind, fields: newFieldFilter(res, stored, selectable),
		itemTypeMeta: []byte(`{"kind":"` + r.ObjectGVK.Kind + `","apiVersion":"` + gvr.GroupVersion().String() + `",`)}
	if !r.IsScale() {
		s.table = spec.table
	}
	s.verbs = objectVerbs()
	if r.IsScale() {
		s.verbs = scaleVerbs()
	}
	s.shape = typedShape{}
	if res.Custom {
		s.shape = unstructuredShape{crv: r.Crv}
	}
	return &scope{resource: s, store: store.New(r, a.env)}
}

// verbs are the handlers of GET, PUT and PATCH of one object, chosen when the route is installed.
type verbs struct {
	get, update, patch func(s *scope, w http.ResponseWriter, r *http.Request, p routes.Params)
}

// objectVerbs read and write the object itself.
func objectVerbs() verbs {
	return verbs{get: (*scope).get, update: (*scope).update, patch: (*scope).patch}
}

// scaleVerbs are a scale subresource's: they read and write a Scale made from the object.
func scaleVerbs() verbs {
	return verbs{get: (*scope).getScale, update: (*scope).updateScale, patch: (*scope).patchScale}
}
