package registry

import (
	"reflect"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// customRules are kube's rules for custom resources (apiextensions-apiserver's strategy): with a
// status subresource, a create or update of the main resource cannot set status.
type customRules struct {
	hasStatus bool
}

func (c customRules) prepareCreate(obj runtime.Object) {
	if u, ok := obj.(*unstructured.Unstructured); ok && c.hasStatus {
		delete(u.Object, "status")
	}
}

func (c customRules) prepareUpdate(obj, old runtime.Object) {
	u, ok1 := obj.(*unstructured.Unstructured)
	o, ok2 := old.(*unstructured.Unstructured)
	if !ok1 || !ok2 || !c.hasStatus {
		return
	}
	copyStatus(u, o)
}

// copyStatus sets the status of to to that of from (shared, not copied deeply), removing it when from
// has none.
func copyStatus(to, from *unstructured.Unstructured) {
	if status, found := from.Object["status"]; found {
		to.Object["status"] = status
	} else {
		delete(to.Object, "status")
	}
}

// validate checks what every custom resource must have; schema validation is the OpenAPI layer's.
func (customRules) validate(runtime.Object) field.ErrorList { return nil }

func (customRules) validateUpdate(runtime.Object, runtime.Object) field.ErrorList { return nil }

// specChanged reports whether anything outside metadata and status differs, which is what moves a
// custom resource's generation on.
func specChanged(obj, old runtime.Object) bool {
	u, ok1 := obj.(*unstructured.Unstructured)
	o, ok2 := old.(*unstructured.Unstructured)
	if !ok1 || !ok2 {
		return false
	}
	for k, v := range u.Object {
		if k == "metadata" || k == "status" {
			continue
		}
		if !reflect.DeepEqual(v, o.Object[k]) {
			return true
		}
	}
	for k := range o.Object {
		if k == "metadata" || k == "status" {
			continue
		}
		if _, ok := u.Object[k]; !ok {
			return true
		}
	}
	return false
}

// PrepareForStatusUpdate makes obj the stored object with only its status replaced, as a write to the
// status subresource does: everything else, metadata included, comes from old.
func (s *Strategy) PrepareForStatusUpdate(obj, old runtime.Object) runtime.Object {
	var out runtime.Object
	if u, ok := obj.(*unstructured.Unstructured); ok {
		o := old.(*unstructured.Unstructured).DeepCopy()
		copyStatus(o, u)
		out = o
	} else {
		out = s.rules.(statusRules).statusUpdate(obj, old)
	}
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

// statusRules is implemented by built-in kinds with a status subresource.
type statusRules interface {
	statusUpdate(obj, old runtime.Object) runtime.Object
}
