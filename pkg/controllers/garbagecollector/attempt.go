package garbagecollector

import (
	"context"
	"errors"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The outcomes of a work item.
type outcome int

const (
	forget outcome = iota
	requeue
)

// nodeView is what a worker reads of a node, copied under the graph's mutex.
type nodeView struct {
	id                 identity
	virtual            bool
	beingDeleted       bool
	deletingDependents bool
	owners             []metav1.OwnerReference
	dependents         int
	// dependentDeletingDependents: some dependent is itself deleting its dependents.
	dependentDeletingDependents bool
}

func (g *graph) view(n *node) (nodeView, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.nodes[n.uid] != n {
		return nodeView{}, false // removed, or replaced by a node of the same UID
	}
	v := nodeView{id: n.identity(), virtual: n.is(stateVirtual), beingDeleted: n.is(stateBeingDeleted),
		deletingDependents: n.is(stateDeletingDependents), dependents: len(n.dependents)}
	for _, o := range n.owners {
		v.owners = append(v.owners, o.toAPI())
	}
	for d := range n.dependents {
		if d.is(stateDeletingDependents) {
			v.dependentDeletingDependents = true
			break
		}
	}
	return v, true
}

// attemptToDeleteWorker handles one node of attemptToDelete (kube's attemptToDeleteWorker).
func (r *run) attemptToDeleteWorker(ctx context.Context, n *node) outcome {
	v, ok := r.g.view(n)
	if !ok {
		return forget
	}
	err := r.attemptToDeleteItem(ctx, n, v)
	switch {
	case errors.Is(err, errVirtualDeleted), errors.Is(err, errNamespacedOwnerOfClusterScoped):
		return forget
	case err != nil:
		if ctx.Err() == nil {
			var rm *restMappingError
			if errors.As(err, &rm) {
				r.log.Debug("syncing an item failed; retrying", "item", v.id.String(), "err", err)
			} else {
				r.log.Warn("syncing an item failed; retrying", "item", v.id.String(), "err", err)
			}
		}
		return requeue
	}
	if v2, ok := r.g.view(n); ok && v2.virtual {
		// Not observed through a watch yet: look again later, or a virtual node for an
		// object created and deleted meanwhile would stay in the graph forever.
		return requeue
	}
	return forget
}

// attemptToDeleteItem deletes the object n stands for if all its owners are absent, removes the
// references to absent owners if some are present, and finishes foreground deletions (kube's
// attemptToDeleteItem). A virtual node found absent is reported to the graph.
func (r *run) attemptToDeleteItem(ctx context.Context, n *node, v nodeView) error {
	// Being deleted is a one-way trip: wait for the delete, then handle the dependents.
	if v.beingDeleted && !v.deletingDependents {
		return nil
	}
	// An observed object is read from the watch cache it was observed from (kube's TODO: "it's
	// only necessary to talk to the API server if this is a virtual node"): a delete carries the
	// resourceVersion read as a precondition, so a decision made on a stale copy cannot delete.
	// Whether an object exists that only references name is asked of etcd, as are owners.
	get := r.api.getCached
	if v.virtual {
		get = r.api.get
	}
	latest, err := get(ctx, v.id)
	switch {
	case apierrors.IsNotFound(err):
		r.virtualDelete(v.id)
		return errVirtualDeleted
	case err != nil:
		return err
	}
	if latest.GetUID() != v.id.UID {
		r.virtualDelete(v.id)
		return errVirtualDeleted
	}
	if v.deletingDependents {
		return r.processDeletingDependents(ctx, n, v.id)
	}
	refs := latest.GetOwnerReferences()
	if len(refs) == 0 {
		return nil
	}
	c, err := r.classify(ctx, v.id, refs)
	if err != nil {
		return err
	}
	d := decide(c, v.dependents > 0, v.dependentDeletingDependents, latest.GetFinalizers())
	switch d.action {
	case removeRefs:
		if err := r.api.deleteOwnerRefs(ctx, v.id, d.remove); err != nil {
			return err
		}
		r.metrics.refsRemoved.Add(float64(len(d.remove)))
		return nil
	case deleteObject:
		if d.unblock {
			if err := r.api.unblockOwnerRefs(ctx, v.id, v.owners); err != nil {
				return err
			}
		}
		return r.delete(ctx, v.id, latest, d.policy)
	}
	return nil
}

func (r *run) delete(ctx context.Context, id identity, latest *unstructured.Unstructured, policy metav1.DeletionPropagation) error {
	err := r.api.delete(ctx, id, latest.GetResourceVersion(), latest.GetOwnerReferences(), policy)
	if apierrors.IsNotFound(err) {
		r.virtualDelete(id)
		return errVirtualDeleted
	}
	if err == nil {
		r.metrics.deletions.WithLabelValues(string(policy)).Inc()
	}
	return err
}

func (r *run) virtualDelete(id identity) {
	r.g.mu.Lock()
	defer r.g.mu.Unlock()
	r.g.virtualDelete(id)
}

// processDeletingDependents finishes a foreground deletion once no dependent blocks it, and
// otherwise hands the blocking dependents to attemptToDelete.
func (r *run) processDeletingDependents(ctx context.Context, n *node, id identity) error {
	r.g.mu.Lock()
	blocking := n.blockingDependents()
	var todo []*node
	for _, d := range blocking {
		if !d.is(stateDeletingDependents) {
			todo = append(todo, d)
		}
	}
	r.g.mu.Unlock()
	if len(blocking) == 0 {
		removed, err := r.api.removeFinalizer(ctx, id, finalizerDeleteDependents)
		if removed {
			r.metrics.finalized.WithLabelValues(finalizerDeleteDependents).Inc()
		}
		return err
	}
	for _, d := range todo {
		r.attemptToDelete.Add(d)
	}
	return nil
}

// classify sorts an object's owner references (kube's classifyReferences).
func (r *run) classify(ctx context.Context, item identity, refs []metav1.OwnerReference) (classified, error) {
	var c classified
	for _, ref := range refs {
		dangling, owner, err := r.isDangling(ctx, ref, item)
		if err != nil {
			return c, err
		}
		switch {
		case dangling:
			c.dangling = append(c.dangling, ref)
		case owner.GetDeletionTimestamp() != nil && slices.Contains(owner.GetFinalizers(), finalizerDeleteDependents):
			c.waiting = append(c.waiting, ref)
		default:
			c.solid = append(c.solid, ref)
		}
	}
	return c, nil
}

// isDangling reports whether ref names an absent owner of item, looking the owner up by name in
// item's namespace (for a namespaced owner kind) and comparing UIDs: a live object of that name
// with another UID is not the owner. It returns the owner when it exists.
//
// A namespaced dependent whose reference names an owner that lives in another namespace therefore
// finds it absent (references never cross namespaces) and is collected; the graph records kube's
// OwnerRefInvalidNamespace event when it sees that owner. A cluster-scoped dependent that names a
// namespaced kind gets errNamespacedOwnerOfClusterScoped: kube neither deletes it nor retries.
func (r *run) isDangling(ctx context.Context, ref metav1.OwnerReference, item identity) (bool, *unstructured.Unstructured, error) {
	key := identity{APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name, UID: ref.UID}
	if r.absent.has(key) {
		return true, nil, nil // an absent cluster-scoped owner
	}
	key.Namespace = item.Namespace
	if r.absent.has(key) {
		return true, nil, nil // an absent owner in item's namespace
	}
	mp, err := r.mapper().resource(ref.APIVersion, ref.Kind)
	if err != nil {
		return false, nil, err
	}
	if !mp.namespaced {
		key.Namespace = ""
	}
	if item.Namespace == "" && mp.namespaced {
		return false, nil, errNamespacedOwnerOfClusterScoped
	}
	owner, err := r.api.get(ctx, key)
	switch {
	case apierrors.IsNotFound(err):
		r.absent.add(key)
		return true, nil, nil
	case err != nil:
		return false, nil, err
	}
	if owner.GetUID() != ref.UID {
		r.absent.add(key)
		return true, nil, nil
	}
	return false, owner, nil
}
