package registry

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
)

// PrepareForStatusUpdate makes obj the stored object with only its status replaced, as a write to the
// status subresource does: everything else, metadata included, comes from old.
func (s *Strategy) PrepareForStatusUpdate(obj, old runtime.Object) runtime.Object {
	out := s.rules.(statusRules).statusUpdate(obj, old)
	keepManagedFields(out, obj)
	return out
}

// keepManagedFields carries the request's managedFields into the object a subresource write stores:
// the field manager has just recorded the write there, as kube's status strategies keep it.
func keepManagedFields(out, obj runtime.Object) {
	from, err1 := meta.Accessor(obj)
	to, err2 := meta.Accessor(out)
	if err1 == nil && err2 == nil {
		to.SetManagedFields(from.GetManagedFields())
	}
}

// statusRules is implemented by kinds with a status subresource.
type statusRules interface {
	statusUpdate(obj, old runtime.Object) runtime.Object
}
