package garbagecollector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"
)

// This file is kube's operations.go and patch.go: the collector's reads and writes, through the
// server's API so that admission, validation and managedFields apply to them as to any client's.

// errNamespacedOwnerOfClusterScoped marks a cluster-scoped object that names a namespaced owner:
// kube gives up on it (it cannot resolve on retry) and neither deletes it nor retries.
var errNamespacedOwnerOfClusterScoped = errors.New("cluster-scoped objects cannot refer to namespaced owners")

// errVirtualDeleted says the object was found absent and the graph was told so: no retry.
var errVirtualDeleted = errors.New("the object is absent; the graph was told")

// api is the collector's client side.
type api struct {
	client dynamic.Interface
	mapper func() *mapper
}

func (a *api) resource(apiVersion, kind, namespace string) (dynamic.ResourceInterface, mapping, error) {
	mp, err := a.mapper().resource(apiVersion, kind)
	if err != nil {
		return nil, mp, err
	}
	if !mp.namespaced {
		return a.client.Resource(mp.resource), mp, nil
	}
	if namespace == "" {
		// The type is namespaced but the object has no namespace: only a cluster-scoped
		// dependent naming a namespaced owner gets here.
		return nil, mp, errNamespacedOwnerOfClusterScoped
	}
	return a.client.Resource(mp.resource).Namespace(namespace), mp, nil
}

// get reads the object id names, from etcd (a quorum read).
func (a *api) get(ctx context.Context, id identity) (*unstructured.Unstructured, error) {
	return a.getAt(ctx, id, "")
}

// getCached reads the object id names from the resource's watch cache: the cache the graph
// observed it from, so the answer is never older than what the graph knows.
func (a *api) getCached(ctx context.Context, id identity) (*unstructured.Unstructured, error) {
	return a.getAt(ctx, id, "0")
}

func (a *api) getAt(ctx context.Context, id identity, resourceVersion string) (*unstructured.Unstructured, error) {
	rc, _, err := a.resource(id.APIVersion, id.Kind, id.Namespace)
	if err != nil {
		return nil, err
	}
	return rc.Get(ctx, id.Name, metav1.GetOptions{ResourceVersion: resourceVersion})
}

// delete deletes the object id names if it still has id's UID and, when resourceVersion is set,
// that resourceVersion. A conflict only because the object changed elsewhere than in its owner
// references is retried without the resourceVersion, so that busy objects do not starve the
// collector (kube's deleteObject).
func (a *api) delete(ctx context.Context, id identity, resourceVersion string, owners []metav1.OwnerReference, policy metav1.DeletionPropagation) error {
	rc, _, err := a.resource(id.APIVersion, id.Kind, id.Namespace)
	if err != nil {
		return err
	}
	uid := id.UID
	pre := metav1.Preconditions{UID: &uid}
	if resourceVersion != "" {
		pre.ResourceVersion = &resourceVersion
	}
	err = rc.Delete(ctx, id.Name, metav1.DeleteOptions{Preconditions: &pre, PropagationPolicy: &policy})
	if apierrors.IsConflict(err) && resourceVersion != "" {
		live, liveErr := rc.Get(ctx, id.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(liveErr) {
			return liveErr
		}
		if liveErr == nil && live.GetUID() == id.UID && live.GetResourceVersion() != resourceVersion && reflect.DeepEqual(live.GetOwnerReferences(), owners) {
			return a.delete(ctx, id, "", nil, policy)
		}
	}
	return err
}

// patch applies a strategic merge patch, or, for kinds that take none (custom resources), the
// JSON merge patch jmp computes from the object as it is now.
func (a *api) patch(ctx context.Context, id identity, smp []byte, jmp func(*unstructured.Unstructured) ([]byte, error)) error {
	rc, mp, err := a.resource(id.APIVersion, id.Kind, id.Namespace)
	if err != nil {
		return err
	}
	if !mp.custom {
		_, err = rc.Patch(ctx, id.Name, types.StrategicMergePatchType, smp, metav1.PatchOptions{})
		if !apierrors.IsUnsupportedMediaType(err) {
			return err
		}
	}
	cur, err := rc.Get(ctx, id.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if cur.GetUID() != id.UID {
		return apierrors.NewNotFound(mp.resource.GroupResource(), id.Name)
	}
	p, err := jmp(cur)
	if err != nil {
		return err
	}
	_, err = rc.Patch(ctx, id.Name, types.MergePatchType, p, metav1.PatchOptions{})
	return err
}

// deleteOwnerRefs removes the references to owners from the object id names (kube's
// GenerateDeleteOwnerRefStrategicMergeBytes; the object's UID in the patch makes it apply to that
// object alone).
func (a *api) deleteOwnerRefs(ctx context.Context, id identity, owners []types.UID) error {
	refs := make([]map[string]string, len(owners))
	for i, uid := range owners {
		refs[i] = map[string]string{"$patch": "delete", "uid": string(uid)}
	}
	smp, err := json.Marshal(map[string]any{"metadata": struct {
		UID             types.UID           `json:"uid"`
		OwnerReferences []map[string]string `json:"ownerReferences"`
	}{id.UID, refs}})
	if err != nil {
		return err
	}
	return a.patch(ctx, id, smp, func(cur *unstructured.Unstructured) ([]byte, error) {
		var keep []metav1.OwnerReference
		for _, r := range cur.GetOwnerReferences() {
			if !slices.Contains(owners, r.UID) {
				keep = append(keep, r)
			}
		}
		return ownerRefsMergePatch(cur.GetResourceVersion(), keep)
	})
}

// unblockOwnerRefs sets blockOwnerDeletion to false in the references of the object id names that
// block (owners are its references as the graph knows them).
func (a *api) unblockOwnerRefs(ctx context.Context, id identity, owners []metav1.OwnerReference) error {
	var blocking []metav1.OwnerReference
	for _, o := range owners {
		if o.BlockOwnerDeletion != nil && *o.BlockOwnerDeletion {
			o.BlockOwnerDeletion = new(bool)
			blocking = append(blocking, o)
		}
	}
	smp, err := json.Marshal(map[string]any{"metadata": struct {
		UID             types.UID               `json:"uid"`
		OwnerReferences []metav1.OwnerReference `json:"ownerReferences"`
	}{id.UID, blocking}})
	if err != nil {
		return err
	}
	return a.patch(ctx, id, smp, func(cur *unstructured.Unstructured) ([]byte, error) {
		all := make([]metav1.OwnerReference, 0, len(owners))
		for _, o := range owners {
			o.BlockOwnerDeletion = new(bool)
			all = append(all, o)
		}
		return ownerRefsMergePatch(cur.GetResourceVersion(), all)
	})
}

func ownerRefsMergePatch(resourceVersion string, refs []metav1.OwnerReference) ([]byte, error) {
	type meta struct {
		ResourceVersion string                  `json:"resourceVersion"`
		OwnerReferences []metav1.OwnerReference `json:"ownerReferences"`
	}
	return json.Marshal(struct {
		Metadata meta `json:"metadata"`
	}{meta{resourceVersion, refs}})
}

// removeFinalizer removes finalizer from the object id names with a JSON merge patch that carries
// the resourceVersion it was computed from, retrying on conflicts (kube's removeFinalizer). Once
// the last finalizer of an object being deleted is gone, the server deletes it. It reports whether
// it removed the finalizer (false: the object or the finalizer was gone already).
func (a *api) removeFinalizer(ctx context.Context, id identity, finalizer string) (removed bool, _ error) {
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		removed = false
		cur, err := a.get(ctx, id)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("cannot finalize owner %s, because cannot get it: %w. The garbage collector will retry later", id, err)
		}
		if cur.GetUID() != id.UID {
			return nil // that object is gone; this one is another
		}
		var rest []string
		found := false
		for _, f := range cur.GetFinalizers() {
			if f == finalizer {
				found = true
				continue
			}
			rest = append(rest, f)
		}
		if !found {
			return nil
		}
		type meta struct {
			ResourceVersion string   `json:"resourceVersion"`
			Finalizers      []string `json:"finalizers"`
		}
		p, err := json.Marshal(struct {
			Metadata meta `json:"metadata"`
		}{meta{cur.GetResourceVersion(), rest}})
		if err != nil {
			return err
		}
		rc, _, err := a.resource(id.APIVersion, id.Kind, id.Namespace)
		if err != nil {
			return err
		}
		_, err = rc.Patch(ctx, id.Name, types.MergePatchType, p, metav1.PatchOptions{})
		removed = err == nil
		return err
	})
	if apierrors.IsConflict(err) {
		return false, fmt.Errorf("updateMaxRetries(%d) has reached. The garbage collector will retry later for owner %v", retry.DefaultBackoff.Steps, id)
	}
	return removed, err
}
