// Package registry holds the rules of each kind the server stores: how to make an empty object, what
// a create and an update set and keep, and what makes an object invalid. The REST handlers apply
// these rules; this package knows nothing of HTTP or storage.
package registry

import (
	"fmt"
	"reflect"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apictl/apictl/pkg/kinds"
	kindsbuiltin "github.com/apictl/apictl/pkg/kinds/builtin"
	"github.com/apictl/apictl/pkg/kinds/customresources"
	"github.com/apictl/apictl/pkg/routes"
)

// Registry maps each resource of an API to its Strategy.
type Registry struct {
	strategies map[schema.GroupVersionResource]*Strategy
}

// New builds the strategies of every resource of api. Built-in resources get their kind's rules;
// custom resources get the rules kube applies to CRDs. Create-only resources (the review APIs) store
// nothing and have no rules here.
func New(api *routes.API) (*Registry, error) {
	r := &Registry{strategies: map[schema.GroupVersionResource]*Strategy{}}
	for _, g := range api.Groups() {
		for _, v := range g.Versions {
			for i := range v.Resources {
				res := &v.Resources[i]
				if res.CreateOnly() {
					continue
				}
				gvr := schema.GroupVersionResource{Group: g.Name, Version: v.Name, Resource: res.Plural}
				s, err := newStrategy(gvr, res)
				if err != nil {
					return nil, err
				}
				r.strategies[gvr] = s
			}
		}
	}
	return r, nil
}

// Strategy returns the rules of a resource.
func (r *Registry) Strategy(gvr schema.GroupVersionResource) (*Strategy, bool) {
	s, ok := r.strategies[gvr]
	return s, ok
}

// Strategy is the rule set of one resource.
type Strategy struct {
	Resource *routes.Resource
	GVK      schema.GroupVersionKind
	GVR      schema.GroupVersionResource

	// Stored is set for a resource whose objects are stored as another's (routes.Resource.StoredAs):
	// how they convert. Nil for most.
	Stored *kinds.StoredForm
	// Fields are the fields beyond metadata that lists and watches select the stored objects by
	// (the stored kind's, for a resource stored as another's); nil for none.
	Fields *kinds.FieldSelectors
	// Equivalent converts the objects to those of the kinds stored alike, for admission plugins that
	// match those (matchPolicy Equivalent); nil for a kind with no such twin.
	Equivalent func(in, out runtime.Object) error

	goType    reflect.Type // nil for custom resources
	hasStatus bool
	nameFn    apivalidation.ValidateNameFunc
	// rules is the kind's own part: nil for kinds with no rules beyond metadata.
	rules kindRules
	// store are the generic store's settings for the kind, settled once: handlers ask on every request.
	store kinds.StoreRules
	// described is the strategy of a kind with a package of its own (pkg/kinds), for the optional
	// parts (subresource.go); nil for the others.
	described kinds.Strategy
	admission []kinds.Admission
}

// StoreRules are the generic store's settings for the kind: its descriptor's, or for a kind without
// a package of its own yet, kube's settings for it (legacyStoreRules).
func (s *Strategy) StoreRules() kinds.StoreRules { return s.store }

// kindRules are what a kind adds to the generic metadata rules.
type kindRules interface {
	// prepareCreate defaults fields and clears what a create may not set.
	prepareCreate(obj runtime.Object)
	// prepareUpdate keeps what an update of the main resource may not change (status, when the kind
	// has a status subresource).
	prepareUpdate(obj, old runtime.Object)
	validate(obj runtime.Object) field.ErrorList
	validateUpdate(obj, old runtime.Object) field.ErrorList
}

// defaulter is a kind with defaults that kube's decoder applies (its SetDefaults_ functions), before
// managedFields are computed.
type defaulter interface {
	setDefaults(obj runtime.Object)
}

func newStrategy(gvr schema.GroupVersionResource, res *routes.Resource) (s *Strategy, err error) {
	s = &Strategy{
		Resource:  res,
		GVR:       gvr,
		GVK:       gvr.GroupVersion().WithKind(res.Kind),
		goType:    res.GoType,
		nameFn:    apivalidation.NameIsDNSSubdomain,
		hasStatus: hasSubresource(res, "status"),
	}
	if res.Custom || res.GoType == nil {
		// A custom resource's descriptor is built from its CRD's route-model entry.
		s.goType = nil
		k := customresources.Kind(gvr.Group, gvr.Version, *res)
		if err := s.describe(&k); err != nil {
			return nil, err
		}
		return s, nil
	}
	if k, ok := kindsbuiltin.Lookup(s.GVK.GroupKind()); ok && k.Version == s.GVK.Version {
		if err := s.describe(k); err != nil {
			return nil, err
		}
		return s, nil
	}
	return nil, fmt.Errorf("no rules for the built-in kind %s: describe it in a package of its own (pkg/kinds) and list it in pkg/kinds/builtin", s.GVK)
}

// describe takes the strategy's rules from the kind's descriptor.
func (s *Strategy) describe(k *kinds.Kind) error {
	s.store, s.described, s.admission, s.Stored, s.Fields, s.Equivalent = k.Store, k.Strategy, k.Admission, k.StoredAs, k.Fields, k.Equivalent
	if k.StoredAs != nil {
		// lists and watches select stored objects, by the stored kind's fields.
		if stored, ok := kindsbuiltin.Lookup(k.StoredAs.GVK.GroupKind()); ok {
			s.Fields = stored.Fields
		}
	}
	rules, err := newDescribedRules(k, s.hasStatus)
	if err != nil {
		return err
	}
	s.rules = rules
	if k.NameRule != nil {
		s.nameFn = k.NameRule
	}
	return nil
}

func hasSubresource(res *routes.Resource, name string) bool {
	_, ok := res.Subresource(name)
	return ok
}

// Custom reports whether objects are unstructured (custom resources).
func (s *Strategy) Custom() bool { return s.goType == nil }

// New returns an empty object of the kind: a pointer to its k8s.io/api type, or an Unstructured.
func (s *Strategy) New() runtime.Object {
	if s.goType == nil {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(s.GVK)
		return u
	}
	return reflect.New(s.goType).Interface().(runtime.Object)
}

// Default applies the kind's decoding defaults to an object decoded from a request body.
func (s *Strategy) Default(obj runtime.Object) {
	if d, ok := s.rules.(defaulter); ok {
		d.setDefaults(obj)
	}
}

// PrepareForCreate sets what the server owns on a new object: uid, creation time, generation, kind
// defaults. The caller has already settled the name and namespace.
func (s *Strategy) PrepareForCreate(obj runtime.Object, now time.Time) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	prepareMetaForCreate(m, now)
	s.rules.prepareCreate(obj)
	return nil
}

// ValidateCreate checks a new object and returns kube's 422 Invalid error, or nil.
func (s *Strategy) ValidateCreate(obj runtime.Object) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	if s.validatesMeta() {
		return s.invalid(m.GetName(), s.rules.validate(obj))
	}
	if _, first := s.described.(kinds.KindFirstValidator); first {
		if errs := s.rules.validate(obj); len(errs) > 0 {
			return s.invalid(m.GetName(), errs)
		}
		return s.invalid(m.GetName(), apivalidation.ValidateObjectMetaAccessor(m, s.Resource.Namespaced, s.nameFn, field.NewPath("metadata")))
	}
	errs := apivalidation.ValidateObjectMetaAccessor(m, s.Resource.Namespaced, s.nameFn, field.NewPath("metadata"))
	errs = append(errs, s.rules.validate(obj)...)
	return s.invalid(m.GetName(), errs)
}

// validatesMeta reports whether the kind's create validation checks metadata itself, with a name
// rule of its own (kinds.MetaValidator). kube's store checks metadata generically only after the
// kind's validation passed, and a name the kind accepts always passes the generic check, so it is
// skipped.
func (s *Strategy) validatesMeta() bool {
	_, own := s.described.(kinds.MetaValidator)
	return own
}

// PrepareForUpdate keeps the server-owned metadata of old and applies the kind's update rules (a
// custom resource's move its generation on when anything but metadata changed).
func (s *Strategy) PrepareForUpdate(obj, old runtime.Object) error {
	m, oldM, err := accessors(obj, old)
	if err != nil {
		return err
	}
	if err := uidPrecondition(m.GetUID(), oldM.GetUID()); err != nil {
		return apierrors.NewConflict(s.GVR.GroupResource(), m.GetName(), err)
	}
	prepareMetaForUpdate(m, oldM)
	s.rules.prepareUpdate(obj, old)
	return nil
}

// ValidateUpdate checks an updated object against the stored one.
func (s *Strategy) ValidateUpdate(obj, old runtime.Object) error {
	m, oldM, err := accessors(obj, old)
	if err != nil {
		return err
	}
	errs := apivalidation.ValidateObjectMetaAccessor(m, s.Resource.Namespaced, s.nameFn, field.NewPath("metadata"))
	errs = append(errs, apivalidation.ValidateObjectMetaAccessorUpdate(m, oldM, field.NewPath("metadata"))...)
	errs = append(errs, s.rules.validateUpdate(obj, old)...)
	return s.invalid(m.GetName(), errs)
}

// statusValidator is a kind whose status writes have rules of their own, as kube's
// Validate<Kind>StatusUpdate functions add.
type statusValidator interface {
	validateStatusUpdate(obj, old runtime.Object) field.ErrorList
}

// ValidateStatusUpdate checks a write to the status subresource against the stored object.
func (s *Strategy) ValidateStatusUpdate(obj, old runtime.Object) error {
	v, ok := s.rules.(statusValidator)
	if !ok {
		return s.ValidateUpdate(obj, old)
	}
	m, oldM, err := accessors(obj, old)
	if err != nil {
		return err
	}
	// kube's store checks metadata on every update, a status write included, before the kind's rules.
	errs := apivalidation.ValidateObjectMetaAccessor(m, s.Resource.Namespaced, s.nameFn, field.NewPath("metadata"))
	errs = append(errs, apivalidation.ValidateObjectMetaAccessorUpdate(m, oldM, field.NewPath("metadata"))...)
	errs = append(errs, v.validateStatusUpdate(obj, old)...)
	return s.invalid(m.GetName(), errs)
}

// accessors returns the metadata of an update's new and stored objects.
func accessors(obj, old runtime.Object) (m, oldM metav1.Object, err error) {
	if m, err = meta.Accessor(obj); err != nil {
		return nil, nil, err
	}
	if oldM, err = meta.Accessor(old); err != nil {
		return nil, nil, err
	}
	return m, oldM, nil
}

func (s *Strategy) invalid(name string, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	gk := s.GVK.GroupKind()
	if s.Stored != nil {
		gk = s.Stored.GVK.GroupKind() // kube validates the stored kind: events.k8s.io events are core Events
	}
	return apierrors.NewInvalid(gk, name, uniqueErrors(errs))
}

// uniqueErrors drops repeats of an error: an update checks metadata generically and again in the
// kind's own validation, and kube reports each problem once (a bad label of a
// ValidatingWebhookConfiguration is one cause, as it is for a ConfigMap).
func uniqueErrors(errs field.ErrorList) field.ErrorList {
	out := make(field.ErrorList, 0, len(errs))
	seen := map[string]bool{}
	for _, e := range errs {
		key := e.Error()
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, e)
	}
	return out
}
