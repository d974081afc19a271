package kinds

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// DeleteMarker is a Strategy whose kube store marks an object on delete by rules of its own (a
// Namespace's lifecycle, a CRD's cleanup) where the generic store would set the garbage
// collector's finalizers.
type DeleteMarker interface {
	// MarkOnDelete changes obj, a stored object a delete with opts reached, as the kind's store
	// does, and reports whether the kind's rule applies. When it does, obj stays, marked: changed
	// says whether obj changed besides its deletionTimestamp, which the caller sets on the first
	// delete (obj has none yet). When it does not, the generic rules decide.
	MarkOnDelete(obj runtime.Object, opts *metav1.DeleteOptions) (applies, changed bool)
}

// WithGCFinalizers returns finalizers with the garbage collector's two ("orphan",
// "foregroundDeletion") removed and added back, at the end, as asked; the others stay in their
// order.
func WithGCFinalizers(finalizers []string, orphan, foreground bool) []string {
	next := make([]string, 0, len(finalizers)+1)
	for _, f := range finalizers {
		if f != metav1.FinalizerOrphanDependents && f != metav1.FinalizerDeleteDependents {
			next = append(next, f)
		}
	}
	if orphan {
		next = append(next, metav1.FinalizerOrphanDependents)
	}
	if foreground {
		next = append(next, metav1.FinalizerDeleteDependents)
	}
	return next
}

// SameSet reports whether a and b hold the same strings, ignoring order and repeats.
func SameSet(a, b []string) bool {
	for _, s := range a {
		if !slices.Contains(b, s) {
			return false
		}
	}
	for _, s := range b {
		if !slices.Contains(a, s) {
			return false
		}
	}
	return true
}
