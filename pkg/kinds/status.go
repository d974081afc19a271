package kinds

import (
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Object is a kind's k8s.io/api type, such as *corev1.ResourceQuota.
type Object interface {
	runtime.Object
	metav1.Object
}

// StatusFields says where a kind's objects (O) keep their status (S) and spec. Implement it on an
// empty struct type, so that StatusSubresource's zero value works.
type StatusFields[O Object, S any] interface {
	// Status returns o's status, for StatusSubresource to read and set.
	Status(o O) *S
	// Spec returns o's spec (a pointer), whose change moves metadata.generation on; nil for a kind
	// whose strategy leaves the generation to the generic layer.
	Spec(o O) any
}

// StatusSubresource is the part of a Strategy that kube's strategies of a kind with a status
// subresource share, said once: a create starts with no status (and, when F has a spec, generation
// 1); an update of the main resource keeps the stored status (and moves the generation on when the
// spec changed); a write to status takes the stored object and only obj's status. Embed it in the
// kind's strategy: its methods give the strategy PrepareForCreate, PrepareForUpdate and
// PrepareForStatusUpdate, and a strategy that resets more on a status write defines its own.
type StatusSubresource[O Object, S any, F StatusFields[O, S]] struct{}

// PrepareForCreate drops the status, which only the kind's controllers write.
func (StatusSubresource[O, S, F]) PrepareForCreate(obj runtime.Object) {
	var f F
	o := obj.(O)
	var zero S
	*f.Status(o) = zero
	if f.Spec(o) != nil {
		o.SetGeneration(1)
	}
}

// PrepareForUpdate keeps the stored status and moves the generation on when the spec changed.
func (StatusSubresource[O, S, F]) PrepareForUpdate(obj, old runtime.Object) {
	var f F
	o, prev := obj.(O), old.(O)
	if spec := f.Spec(o); spec != nil && !apiequality.Semantic.DeepEqual(spec, f.Spec(prev)) {
		o.SetGeneration(prev.GetGeneration() + 1)
	}
	copyStatus(f.Status(o), f.Status(prev))
}

// PrepareForStatusUpdate returns old with obj's status: everything else, metadata included, stays as
// stored.
func (StatusSubresource[O, S, F]) PrepareForStatusUpdate(obj, old runtime.Object) runtime.Object {
	var f F
	out := old.DeepCopyObject().(O)
	copyStatus(f.Status(out), f.Status(obj.(O)))
	return out
}

// copyStatus sets *dst to a deep copy of *src: the stored object's status is shared with the watch
// cache, and the object being written must not alias it.
func copyStatus[S any](dst, src *S) {
	if d, ok := any(src).(interface{ DeepCopyInto(*S) }); ok {
		d.DeepCopyInto(dst)
		return
	}
	*dst = *src
}
