package handlers

//lint:file-ignore SA1019 orphanDependents is deprecated in kube's API, and kube still honours it

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apictl/apictl/pkg/kinds"
)

// gcPolicy is what a kind's deletes do to its dependents when the client names no policy: kube's
// rest.GarbageCollectionPolicy, which each kind declares (registry.Strategy.DeletePolicy).
type gcPolicy = kinds.DeletePolicy

const (
	gcDeleteDependents = kinds.DeleteDependents
	gcOrphanDependents = kinds.OrphanDependents
	gcUnsupported      = kinds.Unsupported
)

// gcFinalizersFor says which of the garbage collector's finalizers a delete with o asks for: kube's
// store rules shouldOrphanDependents and shouldDeleteDependentsInForeground, which look at the same
// things in the same order (the options, then a GC finalizer the object already has, then the
// kind's default) and never both say yes.
func gcFinalizersFor(policy gcPolicy, finalizers []string, o *metav1.DeleteOptions) (orphan, foreground bool) {
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
func deletionFinalizers(policy gcPolicy, finalizers []string, o *metav1.DeleteOptions) ([]string, bool) {
	orphan, foreground := gcFinalizersFor(policy, finalizers, o)
	next := withGCFinalizers(finalizers, orphan, foreground)
	if sameSet(finalizers, next) {
		return finalizers, false
	}
	return next, true
}

// namespaceDeletionFinalizers returns a namespace's finalizers after its first delete with o: kube's
// namespace storage has its own rules (shouldHaveOrphanFinalizer, shouldHaveDeleteDependentsFinalizer),
// in which orphanDependents=false asks for foreground deletion.
func namespaceDeletionFinalizers(finalizers []string, o *metav1.DeleteOptions) []string {
	orphan := slices.Contains(finalizers, metav1.FinalizerOrphanDependents)
	foreground := slices.Contains(finalizers, metav1.FinalizerDeleteDependents)
	switch {
	case o == nil:
	case o.OrphanDependents != nil:
		orphan, foreground = *o.OrphanDependents, !*o.OrphanDependents
	case o.PropagationPolicy != nil:
		orphan = *o.PropagationPolicy == metav1.DeletePropagationOrphan
		foreground = *o.PropagationPolicy == metav1.DeletePropagationForeground
	}
	next := withGCFinalizers(finalizers, orphan, foreground)
	if sameSet(finalizers, next) {
		return finalizers
	}
	return next
}

// withGCFinalizers returns finalizers with the garbage collector's two ("orphan",
// "foregroundDeletion") removed and added back, at the end, as asked; the others stay in their
// order. kube's namespace storage builds the list from a map, in no set order; the order here is
// the generic store's.
func withGCFinalizers(finalizers []string, orphan, foreground bool) []string {
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

// sameSet reports whether a and b hold the same strings, ignoring order and repeats.
func sameSet(a, b []string) bool {
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
