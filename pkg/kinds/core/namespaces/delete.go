package namespaces

//lint:file-ignore SA1019 orphanDependents is deprecated in kube's API, and kube still honours it

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/apictl/apictl/pkg/kinds"
)

// MarkOnDelete is kube's namespace storage: the first delete sets the Terminating phase and the
// garbage collector's finalizers by the namespace's own rules, and leaves the namespace for the
// namespace controller to empty; a later delete returns it as it is while its spec.finalizers wait.
func (strategy) MarkOnDelete(obj runtime.Object, opts *metav1.DeleteOptions) (applies, changed bool) {
	ns := obj.(*corev1.Namespace)
	if ns.DeletionTimestamp != nil {
		return len(ns.Spec.Finalizers) > 0, false
	}
	ns.Status.Phase = corev1.NamespaceTerminating
	ns.Finalizers = deletionFinalizers(ns.Finalizers, opts)
	return true, true
}

// deletionFinalizers returns a namespace's finalizers after its first delete with o: kube's
// namespace storage has its own rules (shouldHaveOrphanFinalizer, shouldHaveDeleteDependentsFinalizer),
// in which orphanDependents=false asks for foreground deletion. kube builds the list from a map, in
// no set order; the order here is the generic store's.
func deletionFinalizers(finalizers []string, o *metav1.DeleteOptions) []string {
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
	next := kinds.WithGCFinalizers(finalizers, orphan, foreground)
	if kinds.SameSet(finalizers, next) {
		return finalizers
	}
	return next
}
