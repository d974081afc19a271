package garbagecollector

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// action is what attemptToDelete does with a dependent once its owners are classified.
type action int

const (
	// keep: an owner exists and no reference needs removing, or the object has no owners.
	keep action = iota
	// removeRefs: some owner exists; the references to absent owners, and to owners waiting
	// for their dependents' deletion, are removed.
	removeRefs
	// deleteObject: no owner is left to keep the object.
	deleteObject
)

// decision is attemptToDelete's verdict on one dependent.
type decision struct {
	action action
	// remove are the owner UIDs whose references removeRefs removes.
	remove []types.UID
	// policy is deleteObject's propagation policy.
	policy metav1.DeletionPropagation
	// unblock: before a foreground delete, the dependent's blocking references are made
	// non-blocking, to break a possible cycle of foreground deletions.
	unblock bool
}

// classified are an object's owner references, sorted by kube's classifyReferences: solid owners
// exist and are not waiting for their dependents; dangling ones are absent; waiting ones are being
// deleted in the foreground.
type classified struct {
	solid, dangling, waiting []metav1.OwnerReference
}

// decide is the heart of kube's attemptToDeleteItem. hasDependents and dependentDeletingDependents
// describe the object's own dependents in the graph; finalizers are the object's.
func decide(refs classified, hasDependents, dependentDeletingDependents bool, finalizers []string) decision {
	switch {
	case len(refs.solid) != 0:
		if len(refs.dangling) == 0 && len(refs.waiting) == 0 {
			return decision{action: keep}
		}
		// References to waiting owners must go too, or those owners would wait for this
		// dependent forever.
		var uids []types.UID
		for _, r := range refs.dangling {
			uids = append(uids, r.UID)
		}
		for _, r := range refs.waiting {
			uids = append(uids, r.UID)
		}
		return decision{action: removeRefs, remove: uids}
	case len(refs.waiting) != 0 && hasDependents:
		// An owner waits for this object, which has dependents of its own: delete it in the
		// foreground too, so that its dependents go first.
		return decision{action: deleteObject, policy: metav1.DeletePropagationForeground, unblock: dependentDeletingDependents}
	default:
		// No solid owner left, and none waits for dependents: honour a finalizer the object
		// already has, else delete in the background.
		policy := metav1.DeletePropagationBackground
		switch {
		case slices.Contains(finalizers, finalizerOrphanDependents):
			policy = metav1.DeletePropagationOrphan
		case slices.Contains(finalizers, finalizerDeleteDependents):
			policy = metav1.DeletePropagationForeground
		}
		return decision{action: deleteObject, policy: policy}
	}
}
