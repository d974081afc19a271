package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apictl/apictl/pkg/patch"
	"github.com/apictl/apictl/pkg/routes"
	"github.com/apictl/apictl/pkg/serve/store"
)

// CreateKey names a create-only route: group, version, resource, subresource ("" for none).
type CreateKey struct{ Group, Version, Resource, Subresource string }

// CreateRequest is a decoded create on a resource whose objects are not stored.
type CreateRequest struct {
	// Namespace and Name come from the path; Name is the parent object's for a subresource
	// (serviceaccounts/{name}/token).
	Namespace, Name string
	// Object is the decoded body: a new value of the route's Go type (Subresource.GoType or
	// Resource.GoType), TypeMeta set.
	Object runtime.Object
	// DryRun is dryRun=All: kube's review APIs answer it as any other create.
	DryRun bool
	// Warn adds a warning to the response (a Warning header), as kube's REST storage may.
	Warn func(message string)
}

// Creater answers such a create; it returns the object to send back with 201 (kube answers 201 for
// reviews and TokenRequest), or an error (an apierrors StatusError is sent as is).
type Creater func(ctx context.Context, req CreateRequest) (runtime.Object, error)

// createRoute is a route whose POST a Creater answers: its scope decodes the body and names the
// resource in errors, without storage or registry rules.
type createRoute struct {
	scope   *scope
	creater Creater
}

// newCreateRoutes builds a scope for every Creater, and checks that every create-only resource of
// the API has one: a route the table installs must answer.
func (a *API) newCreateRoutes() error {
	a.creates = map[scopeKey]*createRoute{}
	for key, c := range a.cfg.Creaters {
		if c == nil {
			return fmt.Errorf("the create handler of %v is nil", key)
		}
		res, ok := a.cfg.API.Resource(key.Group, key.Version, key.Resource)
		if !ok {
			continue // turned off by --runtime-config
		}
		gvr := schema.GroupVersionResource{Group: key.Group, Version: key.Version, Resource: key.Resource}
		r := &resource{api: a, goType: res.GoType, shape: typedShape{}, verbs: objectVerbs(), Resource: &store.Resource{
			Patcher: a.patcher, Res: res, GVR: gvr, GR: gvr.GroupResource(), ObjectGVK: gvr.GroupVersion().WithKind(res.Kind), Form: store.AsStored{}}}
		s := &scope{resource: r, store: store.New(r.Resource, a.env)}
		creates := res.HasVerb(routes.VerbCreate)
		if key.Subresource != "" {
			sub, ok := res.Subresource(key.Subresource)
			if !ok {
				continue
			}
			s.Sub, s.ObjectGVK, s.goType = sub, sub.GroupVersionKind(gvr.GroupVersion()), sub.GoType
			creates = slices.Contains(sub.Verbs, routes.VerbCreate)
		}
		if s.goType == nil || !creates {
			return fmt.Errorf("%v: a create handler needs a built-in resource or subresource that takes creates", key)
		}
		a.creates[scopeKey{key.Group, key.Version, key.Resource, key.Subresource}] = &createRoute{scope: s, creater: c}
	}
	for _, g := range a.cfg.API.Groups() {
		for _, v := range g.Versions {
			for _, r := range v.Resources {
				if _, ok := a.creates[scopeKey{g.Name, v.Name, r.Plural, ""}]; r.CreateOnly() && !ok {
					return fmt.Errorf("the create-only resource %s has no create handler", schema.GroupVersionResource{Group: g.Name, Version: v.Name, Resource: r.Plural})
				}
			}
		}
	}
	return nil
}

// serve answers a POST as kube's create handler does for REST storage that only creates: options and
// body read and checked like any create, the namespace settled, managedFields set, and the Creater's
// answer sent with 201 in the negotiated format.
func (c *createRoute) serve(w http.ResponseWriter, r *http.Request, p routes.Params) {
	s := c.scope
	req, ok := s.readWrite(w, r, "CreateOptions", p.Name)
	if !ok {
		return
	}
	obj, warnings, err := s.decodeObject(req.body, req.bodyFormat, req.opts.FieldValidation)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if err := s.settleNamespace(obj, p.Namespace); err != nil {
		writeError(w, r, err)
		return
	}
	if obj, err = s.Patcher.Update(s.store.PatchTarget(), nil, obj, patch.Manager(req.opts.FieldManager, r.UserAgent())); err != nil {
		writeError(w, r, err)
		return
	}
	out, err := c.creater(r.Context(), CreateRequest{Namespace: p.Namespace, Name: p.Name, Object: obj, DryRun: req.opts.DryRun,
		Warn: func(m string) { warnings = append(warnings, m) }})
	if err != nil {
		writeError(w, r, err)
		return
	}
	if out.GetObjectKind().GroupVersionKind().Empty() {
		out.GetObjectKind().SetGroupVersionKind(s.ObjectGVK)
	}
	body, err := json.Marshal(out)
	if err != nil {
		writeError(w, r, apierrors.NewInternalError(fmt.Errorf("encoding the %s response: %w", s.ObjectGVK.Kind, err)))
		return
	}
	addWarnings(w, warnings)
	writeJSON(w, r, http.StatusCreated, req.out.format, body)
}

// settleNamespace gives the object of a namespaced resource the path's namespace, refusing another
// one with kube's message, and clears it for a cluster-scoped one, as kube's create handler does
// before calling the storage. A subresource's object takes its parent's scope.
func (s *scope) settleNamespace(obj runtime.Object, namespace string) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	if !s.Res.Namespaced {
		m.SetNamespace("")
		return nil
	}
	switch m.GetNamespace() {
	case "":
		m.SetNamespace(namespace)
	case namespace:
	default:
		return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	return nil
}

// newObject returns an empty object of the route's kind: the Go type of a create-only route, else the
// registry's kind.
func (s *scope) newObject() runtime.Object {
	if s.goType != nil {
		return reflect.New(s.goType).Interface().(runtime.Object)
	}
	return s.Strategy.New()
}
