// Package openapi builds the OpenAPI v2 and v3 documents of a route table, as kube-apiserver
// serves them at /openapi/v2 and /openapi/v3: every resource route with its operation ID, tag,
// x-kubernetes-action and x-kubernetes-group-version-kind, query parameters derived from metav1's
// option types, and component schemas derived from the k8s.io/api Go types of built-in kinds or
// taken from the openAPIV3Schema of custom resources. kubectl's --validate=strict looks for the
// fieldValidation parameter of PATCH operations here, kubectl explain reads the v3 schemas, and
// server-side apply can build its type converter from Models.
package openapi

import (
	"fmt"
	"net/http"
	"reflect"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/apictl/apictl/pkg/routes"
)

// Options describe the documents.
type Options struct {
	// Title and Version fill the info object; kube uses "Kubernetes" and its own version.
	Title   string
	Version string
}

func (o Options) info() *spec.Info {
	title := o.Title
	if title == "" {
		title = "Kubernetes"
	}
	v := o.Version
	if v == "" {
		v = "unversioned"
	}
	return &spec.Info{InfoProps: spec.InfoProps{Title: title, Version: v}}
}

// inOpenAPI says whether kube publishes a route in OpenAPI: resource routes, discovery and
// /version; health, metrics, OpenAPI itself and profiling stay out.
func inOpenAPI(r *routes.Route) bool {
	if r.IsResource() {
		return true
	}
	switch r.Endpoint {
	case routes.EndpointAPIVersions, routes.EndpointAPIGroupList, routes.EndpointAPIGroup, routes.EndpointAPIResourceList, routes.EndpointVersion:
		return true
	}
	return false
}

// openAPIPath is how a route's path appears in OpenAPI: {path:*} becomes {path}, and discovery
// and version paths end in a slash, as kube registers them.
func openAPIPath(r *routes.Route) string {
	if !r.IsResource() {
		return r.Path + "/"
	}
	return strings.Replace(r.Path, "{path:*}", "{path}", 1)
}

// DocumentKey is the /openapi/v3/<key> document a route belongs to: api/v1 or apis/<g>/<v> for
// resources and their group version's discovery, api, apis, apis/<g> and version for the other
// discovery routes. ok is false for routes outside OpenAPI.
func DocumentKey(r *routes.Route) (key string, ok bool) {
	if !inOpenAPI(r) {
		return "", false
	}
	switch r.Endpoint {
	case routes.EndpointAPIVersions:
		return "api", true
	case routes.EndpointAPIGroupList:
		return "apis", true
	case routes.EndpointAPIGroup:
		return "apis/" + r.Group, true
	case routes.EndpointVersion:
		return "version", true
	}
	return strings.TrimPrefix(routes.GroupVersionPath(r.Group, r.Version), "/"), true
}

// builder resolves the schemas of one document.
type builder struct {
	api  *routes.API
	defs *definitions
}

// response is one status code of an operation.
type response struct {
	code        int
	description string
	schema      *spec.Schema
}

// operation is what v2 and v3 render for one route.
type operation struct {
	route     *routes.Route
	params    []queryParam
	body      *spec.Schema
	bodyReq   bool
	responses []response
}

// plan works out the parameters, body and responses of a route.
func (b *builder) plan(r *routes.Route) (operation, error) {
	op := operation{route: r}
	if !r.IsResource() {
		t, ok := map[routes.Endpoint]reflect.Type{
			routes.EndpointAPIVersions:     reflect.TypeFor[metav1.APIVersions](),
			routes.EndpointAPIGroupList:    reflect.TypeFor[metav1.APIGroupList](),
			routes.EndpointAPIGroup:        reflect.TypeFor[metav1.APIGroup](),
			routes.EndpointAPIResourceList: reflect.TypeFor[metav1.APIResourceList](),
			routes.EndpointVersion:         reflect.TypeFor[version.Info](),
		}[r.Endpoint]
		if !ok {
			return op, fmt.Errorf("route %s %s is not published in OpenAPI", r.Method, r.Path)
		}
		op.responses = []response{{http.StatusOK, "OK", b.defs.refSchema(b.defs.define(t))}}
		return op, nil
	}
	res, ok := b.api.Resource(r.Group, r.Version, r.Resource)
	if !ok {
		return op, fmt.Errorf("route %s %s: the API has no resource %s in %s", r.Method, r.Path, r.Resource, r.GroupVersion())
	}
	object, err := b.objectSchema(r, res)
	if err != nil {
		return op, err
	}
	status := b.meta(reflect.TypeFor[metav1.Status](), schema.GroupVersionKind{Version: "v1", Kind: "Status"})
	gv := r.GroupVersion()
	deleteOptions := b.meta(reflect.TypeFor[metav1.DeleteOptions](), gv.WithKind("DeleteOptions"))
	op.params = actionParams(r.Action)
	ok200 := response{http.StatusOK, "OK", object}
	switch r.Action {
	case routes.ActionGet:
		op.responses = []response{ok200}
	case routes.ActionList:
		list, err := b.listSchema(r, res)
		if err != nil {
			return op, err
		}
		op.responses = []response{{http.StatusOK, "OK", list}}
	case routes.ActionPut:
		op.body, op.bodyReq = object, true
		op.responses = []response{ok200, {http.StatusCreated, "Created", object}}
	case routes.ActionPatch:
		op.body, op.bodyReq = b.meta(reflect.TypeFor[metav1.Patch](), schema.GroupVersionKind{}), true
		op.responses = []response{ok200, {http.StatusCreated, "Created", object}}
	case routes.ActionPost:
		op.body, op.bodyReq = object, true
		op.responses = []response{ok200, {http.StatusCreated, "Created", object}, {http.StatusAccepted, "Accepted", object}}
	case routes.ActionDelete:
		op.body = deleteOptions
		deleted := status
		if res.Custom {
			// Custom resources answer a delete with the object; built-in ones with a Status.
			deleted = object
		}
		op.responses = []response{{http.StatusOK, "OK", deleted}, {http.StatusAccepted, "Accepted", deleted}}
	case routes.ActionDeleteCollection:
		op.body = deleteOptions
		op.responses = []response{{http.StatusOK, "OK", status}}
	case routes.ActionWatch, routes.ActionWatchList:
		op.responses = []response{{http.StatusOK, "OK", b.meta(reflect.TypeFor[metav1.WatchEvent](), gv.WithKind("WatchEvent"))}}
	case routes.ActionConnect:
		op.responses = []response{{http.StatusOK, "OK", &spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"string"}}}}}
	}
	return op, nil
}

// meta refers to a metav1 type, recording the kind it has in gvk (if any).
func (b *builder) meta(t reflect.Type, gvk schema.GroupVersionKind) *spec.Schema {
	name := b.defs.define(t)
	if gvk.Kind != "" {
		b.defs.addGVK(name, gvk)
	}
	return b.defs.refSchema(name)
}

// objectSchema refers to the schema of the object a route reads and writes.
func (b *builder) objectSchema(r *routes.Route, res *routes.Resource) (*spec.Schema, error) {
	gvk := schema.GroupVersionKind(r.ObjectKind)
	if r.Subresource != "" {
		sub, ok := res.Subresource(r.Subresource)
		if !ok {
			return nil, fmt.Errorf("route %s %s: %s has no subresource %s", r.Method, r.Path, r.Resource, r.Subresource)
		}
		switch {
		case sub.GoType != nil:
			name := b.defs.define(sub.GoType)
			b.defs.addGVK(name, gvk)
			return b.defs.refSchema(name), nil
		case gvk.GroupKind() != r.GroupVersion().WithKind(res.Kind).GroupKind():
			return b.defs.refSchema(b.plainObject(gvk)), nil
		}
	}
	gvk = r.GroupVersion().WithKind(res.Kind)
	switch {
	case res.GoType != nil:
		name := b.defs.define(res.GoType)
		b.defs.addGVK(name, gvk)
		return b.defs.refSchema(name), nil
	case res.Custom || res.Schema != nil:
		name, err := b.defs.customSchema(gvk, res.Schema)
		if err != nil {
			return nil, err
		}
		return b.defs.refSchema(name), nil
	}
	return b.defs.refSchema(b.plainObject(gvk)), nil
}

// listSchema refers to the schema of a resource's list kind.
func (b *builder) listSchema(r *routes.Route, res *routes.Resource) (*spec.Schema, error) {
	gv := r.GroupVersion()
	switch {
	case res.ListGoType != nil:
		name := b.defs.define(res.ListGoType)
		b.defs.addGVK(name, gv.WithKind(res.ListKind))
		return b.defs.refSchema(name), nil
	case res.Custom || res.Schema != nil:
		item, err := b.defs.customSchema(gv.WithKind(res.Kind), res.Schema)
		if err != nil {
			return nil, err
		}
		return b.defs.refSchema(b.defs.customListSchema(gv.WithKind(res.Kind), res.ListKind, res.Plural, item)), nil
	}
	return b.defs.refSchema(b.plainObject(gv.WithKind(res.ListKind))), nil
}

// plainObject defines a kind known only by name (from a live server's discovery) as an object.
func (b *builder) plainObject(gvk schema.GroupVersionKind) string {
	name := modelName(gvk)
	if _, ok := b.defs.defs[name]; !ok {
		b.defs.defs[name] = &spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"object"}}}
		b.defs.defs[name].AddExtension(extPreserveUnknown, true)
	}
	b.defs.addGVK(name, gvk)
	return name
}

// gvkExtension is the x-kubernetes-group-version-kind of an operation: one object, not a list.
func gvkExtension(gvk metav1.GroupVersionKind) map[string]any {
	return map[string]any{"group": gvk.Group, "kind": gvk.Kind, "version": gvk.Version}
}

// Models returns the component schemas of every kind of api, keyed by definition name, as
// managedfields.NewTypeConverter takes them for server-side apply.
func Models(api *routes.API) (map[string]*spec.Schema, error) {
	defs, err := newDefinitions(true)
	if err != nil {
		return nil, err
	}
	b := &builder{api: api, defs: defs}
	t := routes.Install(api, routes.InstallOptions{})
	for i := range t.Routes {
		r := &t.Routes[i]
		if !r.IsResource() {
			continue
		}
		if _, err := b.plan(r); err != nil {
			return nil, err
		}
	}
	return b.defs.finish(), nil
}

// operationSlot returns the field of a path item that holds the operation for method; v2 and v3
// path items have the same fields with different operation types.
func operationSlot[O any](method string, get, put, post, del, patch, head, options **O) **O {
	switch method {
	case http.MethodGet:
		return get
	case http.MethodPut:
		return put
	case http.MethodPost:
		return post
	case http.MethodDelete:
		return del
	case http.MethodPatch:
		return patch
	case http.MethodHead:
		return head
	case http.MethodOptions:
		return options
	}
	return nil
}

// securityName names kube's bearer token security scheme.
const securityName = "BearerToken"
