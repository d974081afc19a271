package store

//lint:file-ignore SA1019 orphanDependents is deprecated in kube's API, and kube still honours it

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apictl/apictl/pkg/kinds"
)

// GCPolicy is what a kind's deletes do to its dependents when the client names no policy: kube's
// rest.GarbageCollectionPolicy, which each kind declares (registry.Strategy.DeletePolicy).
type GCPolicy = kinds.DeletePolicy

const (
	gcDeleteDependents = kinds.DeleteDependents
	gcOrphanDependents = kinds.OrphanDependents
	gcUnsupported      = kinds.Unsupported
)

// gcFinalizersFor says which of the garbage collector's finalizers a delete with o asks for: kube's
// store rules shouldOrphanDependents and shouldDeleteDependentsInForeground, which look at the same
// things in the same order (the options, then a GC finalizer the object already has, then the
// kind's default) and never both say yes.
func gcFinalizersFor(policy GCPolicy, finalizers []string, o *metav1.DeleteOptions) (orphan, foreground bool) {
	if policy == gcUnsupported {
		return false, false
	}
	if o != nil && o.OrphanDependents != nil {
		return *o.OrphanDependents, false
	}
	if o != nil && o.PropagationPolicy != nil {
		switch p := *o.PropagationPolicy; p {
		case metav1.DeletePropagationOrphan, metav1.DeletePropagationBackground, metav1.DeletePropagationForeground:
			return p == metav1.DeletePropagationOrphan, p == metav1.DeletePropagationForeground
		}
	}
	for _, f := range finalizers {
		switch f {
		case metav1.FinalizerOrphanDependents:
			return true, false
		case metav1.FinalizerDeleteDependents:
			return false, true
		}
	}
	return policy == gcOrphanDependents, false
}

// deletionFinalizers returns an object's finalizers after a delete with o, and whether they changed:
// kube's deletionFinalizersForGarbageCollection. Unchanged (as a set), the object's own slice is
// returned.
func deletionFinalizers(policy GCPolicy, finalizers []string, o *metav1.DeleteOptions) ([]string, bool) {
	orphan, foreground := gcFinalizersFor(policy, finalizers, o)
	next := kinds.WithGCFinalizers(finalizers, orphan, foreground)
	if kinds.SameSet(finalizers, next) {
		return finalizers, false
	}
	return next, true
}
