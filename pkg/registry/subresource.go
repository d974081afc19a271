package registry

import (
	"k8s.io/apimachinery/pkg/api/meta"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/apictl/apictl/pkg/kinds"
)

// PrepareForCreateBy records on a new object who created it, for a kind whose strategy does
// (kinds.Requester); other kinds are left as they are.
func (s *Strategy) PrepareForCreateBy(obj runtime.Object, u user.Info) {
	if r, ok := s.described.(kinds.Requester); ok {
		if u == nil {
			u = &user.DefaultInfo{}
		}
		r.PrepareForCreateBy(obj, u)
	}
}

// Admission are the kind's own built-in admission plugins (kinds.Kind.Admission).
func (s *Strategy) Admission() []kinds.Admission { return s.admission }

// WritesSubresource reports whether sub is a subresource, other than status, whose writes the kind's
// strategy handles (kinds.SubresourceStrategy).
func (s *Strategy) WritesSubresource(sub string) bool {
	ss, ok := s.described.(kinds.SubresourceStrategy)
	return ok && sub != "status" && hasSubresource(s.Resource, sub) && ss.WritesSubresource(sub)
}

// PrepareForSubresourceUpdate makes the object a write to sub stores: the kind's choice of what the
// write changes, with the server-owned metadata of old and the request's managedFields.
func (s *Strategy) PrepareForSubresourceUpdate(sub string, obj, old runtime.Object) runtime.Object {
	out := s.described.(kinds.SubresourceStrategy).PrepareForSubresourceUpdate(sub, obj, old)
	keepServerMeta(out, old)
	keepManagedFields(out, obj)
	return out
}

// ValidateSubresourceUpdate checks a write to sub against the stored object: metadata as on every
// update, then the kind's rules for sub.
func (s *Strategy) ValidateSubresourceUpdate(sub string, obj, old runtime.Object) error {
	m, oldM, err := accessors(obj, old)
	if err != nil {
		return err
	}
	errs := apivalidation.ValidateObjectMetaAccessor(m, s.Resource.Namespaced, s.nameFn, field.NewPath("metadata"))
	errs = append(errs, apivalidation.ValidateObjectMetaAccessorUpdate(m, oldM, field.NewPath("metadata"))...)
	errs = append(errs, s.described.(kinds.SubresourceStrategy).ValidateSubresourceUpdate(sub, obj, old)...)
	return s.invalid(m.GetName(), errs)
}

// keepServerMeta resets on out what no write may change (uid, creation and deletion, generation),
// from old: a subresource write that keeps the client's metadata must not take these from it.
func keepServerMeta(out, old runtime.Object) {
	m, err1 := meta.Accessor(out)
	oldM, err2 := meta.Accessor(old)
	if err1 == nil && err2 == nil {
		prepareMetaForUpdate(m, oldM)
	}
}
