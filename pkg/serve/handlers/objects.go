package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	sigsjson "sigs.k8s.io/json"

	"github.com/apictl/apictl/pkg/storage"
)

// encode returns an object's stored form: its JSON with kind and apiVersion set and without
// resourceVersion, which etcd supplies.
func (s *store) encode(obj runtime.Object) ([]byte, error) {
	obj.GetObjectKind().SetGroupVersionKind(s.strategy.GVK)
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	m.SetResourceVersion("")
	// Stored as the other resource's kind, or at a CRD's storage version, whatever version the
	// write came in (form.go).
	if obj, err = s.form.toStorage(obj); err != nil {
		return nil, err
	}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return json.Marshal(u.Object)
	}
	return json.Marshal(obj)
}

// decodeStored decodes a stored value into a new object of the resource's kind, with its
// resourceVersion set from the revision.
func (s *store) decodeStored(kv storage.KeyValue) (runtime.Object, error) {
	if s.form.converts(kv.Value) {
		return s.form.decode(kv)
	}
	obj := s.strategy.New()
	if u, ok := obj.(*unstructured.Unstructured); ok {
		content := map[string]any{}
		if err := sigsjson.UnmarshalCaseSensitivePreserveInts(kv.Value, &content); err != nil {
			return nil, fmt.Errorf("decoding stored %s: %w", kv.Key, err)
		}
		u.Object = content
	} else if err := sigsjson.UnmarshalCaseSensitivePreserveInts(kv.Value, obj); err != nil {
		return nil, fmt.Errorf("decoding stored %s: %w", kv.Key, err)
	}
	obj.GetObjectKind().SetGroupVersionKind(s.strategy.GVK)
	if m, err := meta.Accessor(obj); err == nil {
		m.SetResourceVersion(strconv.FormatInt(kv.ModRevision, 10))
	}
	return obj, nil
}

// respond is the body that answers with a stored object (a read, or a successful write): the stored
// bytes with their resourceVersion.
func respond(kv storage.KeyValue) ([]byte, error) {
	return storage.AppendWithResourceVersion(nil, kv)
}

// parseResourceVersion reads the resourceVersion a client sent with an object; "" is 0.
func parseResourceVersion(rv string) (int64, error) {
	if rv == "" {
		return 0, nil
	}
	// Unsigned, as kube parses it: a sign ("+5") is not part of a revision.
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil || n == 0 || n > math.MaxInt64 {
		return 0, apierrors.NewBadRequest(fmt.Sprintf("invalid resourceVersion %q: resourceVersions come from the server, send back the one you read", rv))
	}
	return int64(n), nil
}

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
	key := a.namespaces.key("", namespace)
	if !a.deletedLately(namespace) {
		kv, err := a.namespaces.backend.Get(ctx, key, storage.GetOptions{ResourceVersion: "0"})
		if err == nil && !mayBeTerminating(kv.Value) {
			return nil
		}
	}
	kv, err := a.namespaces.backend.Get(ctx, key, storage.GetOptions{})
	if err != nil {
		if storage.IsNotFound(err) {
			return apierrors.NewNotFound(corev1.Resource("namespaces"), namespace)
		}
		return apiError(err, corev1.Resource("namespaces"), namespace)
	}
	if !mayBeTerminating(kv.Value) {
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

// mayBeTerminating is a quick look at a stored namespace for a deletionTimestamp, so that the common
// case, an active namespace, costs no decoding; a true answer is checked by decoding.
func mayBeTerminating(value []byte) bool {
	return bytes.Contains(value, []byte(`"deletionTimestamp"`))
}
