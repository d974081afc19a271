package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apictl/apictl/pkg/serve/store"
	"github.com/apictl/apictl/pkg/storage"
)

// namespaceState is what a create needs to know of its namespace.
type namespaceState struct {
	Metadata struct {
		DeletionTimestamp *metav1.Time `json:"deletionTimestamp"`
	} `json:"metadata"`
}

// checkNamespace refuses to create into a namespace that does not exist (404) or is being deleted
// (403), as kube's NamespaceLifecycle admission does. Like kube's, it trusts the watch cache for a
// namespace that exists and is active, and confirms a refusal with a linearizable read, so that a
// namespace created a moment ago on another server is not refused. Also like kube's, it skips the
// cache for a namespace this server began deleting lately, which the cache may not show yet; one
// that began terminating a moment ago on another server may still get the object, and the namespace
// controller deletes it with the rest.
func (a *API) checkNamespace(ctx context.Context, gr schema.GroupResource, name, namespace string) error {
	if a.namespaces == nil {
		return nil
	}
	key := a.namespaces.Key("", namespace)
	if !a.deletedLately(namespace) {
		kv, err := a.namespaces.Backend.Get(ctx, key, storage.GetOptions{ResourceVersion: "0"})
		if err == nil && !store.MayBeTerminating(kv.Value) {
			return nil
		}
	}
	kv, err := a.namespaces.Backend.Get(ctx, key, storage.GetOptions{})
	if err != nil {
		if storage.IsNotFound(err) {
			return apierrors.NewNotFound(corev1.Resource("namespaces"), namespace)
		}
		return store.APIError(err, corev1.Resource("namespaces"), namespace)
	}
	if !store.MayBeTerminating(kv.Value) {
		return nil
	}
	var ns namespaceState
	if err := json.Unmarshal(kv.Value, &ns); err != nil {
		return apierrors.NewInternalError(fmt.Errorf("reading namespace %s: %w", namespace, err))
	}
	if ns.Metadata.DeletionTimestamp != nil {
		msg := fmt.Sprintf("unable to create new content in namespace %s because it is being terminated", namespace)
		e := apierrors.NewForbidden(gr, name, fmt.Errorf("%s", msg))
		// kube's namespace lifecycle admission words the cause shorter than the message.
		e.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: corev1.NamespaceTerminatingCause,
			Message: fmt.Sprintf("namespace %s is being terminated", namespace), Field: "metadata.namespace"}}
		return e
	}
	return nil
}

// namespaceLiveLookupTTL is how long creates into a namespace this server began deleting skip the
// watch cache, and recentlyDeletedMax how many such namespaces it remembers: kube's NamespaceLifecycle
// admission uses the same 30 seconds and 4,096 entries.
const (
	namespaceLiveLookupTTL = 30 * time.Second
	recentlyDeletedMax     = 4096
)

// deletedLately says whether this server began deleting the namespace within namespaceLiveLookupTTL.
func (a *API) deletedLately(namespace string) bool {
	return a.recentlyDeleted.has(namespace, a.cfg.Now())
}
