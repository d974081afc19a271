package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apictl/apictl/pkg/controllers/namespaces"
	"github.com/apictl/apictl/pkg/serve/store"
	"github.com/apictl/apictl/pkg/storage"
)

// DefaultNamespaces exist on every server, as on every kube cluster.
var defaultNamespaces = []string{metav1.NamespaceDefault, metav1.NamespaceSystem, metav1.NamespacePublic}

// EnsureDefaultNamespaces creates default, kube-system and kube-public if they are missing. It is a
// post-start hook; several servers on one etcd may run it at once.
func (a *API) EnsureDefaultNamespaces(ctx context.Context) error {
	if a.namespaces == nil {
		return nil
	}
	s := a.namespaces
	for _, name := range defaultNamespaces {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if err := s.Strategy.PrepareForCreate(ns, a.cfg.Now()); err != nil {
			return err
		}
		value, err := s.store.Encode(ns)
		if err != nil {
			return err
		}
		if _, err := s.Backend.Create(ctx, s.Key("", name), value, 0); err != nil && !storage.IsAlreadyExists(err) {
			return fmt.Errorf("creating namespace %s: %w", name, err)
		}
	}
	return nil
}

// Namespaces is the store side of kube's namespace controller (pkg/controllers/namespaces): it reads
// at a revision of the watch caches and deletes as a DELETE does. Nil when namespaces are not served.
func (a *API) Namespaces() namespaces.Store {
	if a.namespaces == nil {
		return nil
	}
	return namespaceStore{a}
}

// namespaceStore is API as the namespace controller's Store.
type namespaceStore struct{ a *API }

// WatchNamespaces follows the namespaces' watch: their own deletes and those through other servers.
func (n namespaceStore) WatchNamespaces(ctx context.Context, changed func()) {
	s := n.a.namespaces
	storage.Reflect(ctx, s.Backend, s.Prefix(""), func(reset bool, items []storage.KeyValue, deleted bool) bool {
		if reset || (!deleted && len(items) == 1 && store.MayBeTerminating(items[0].Value)) {
			changed()
		}
		return true
	}, n.a.cfg.Logger.With("component", "namespace-controller"))
}

func (n namespaceStore) Changes() <-chan struct{} { return n.a.wake }

// Terminating reads at one revision, taken with a single quorum read: the sweep's lists are then
// served by the watch caches once they have caught up with it (kube's consistent reads from cache),
// rather than each going to etcd for a revision of its own.
func (n namespaceStore) Terminating(ctx context.Context) ([]string, namespaces.Revision, error) {
	s := n.a.namespaces
	rev, err := s.Backend.CurrentRevision(ctx)
	if err != nil {
		return nil, 0, err
	}
	res, err := s.Backend.List(ctx, s.Prefix(""), atRevision(namespaces.Revision(rev)))
	if err != nil {
		return nil, 0, err
	}
	var errs []error
	var terminating []string
	for _, kv := range res.Items {
		if !store.MayBeTerminating(kv.Value) {
			continue
		}
		var ns corev1.Namespace
		if err := json.Unmarshal(kv.Value, &ns); err != nil {
			errs = append(errs, fmt.Errorf("reading namespace %s: %w", kv.Key, err))
			continue
		}
		if ns.DeletionTimestamp != nil {
			terminating = append(terminating, ns.Name)
		}
	}
	return terminating, namespaces.Revision(rev), errors.Join(errs...)
}

// atRevision reads at rev or later, from a watch cache that has caught up with it.
func atRevision(rev namespaces.Revision) storage.ListOptions {
	return storage.ListOptions{ResourceVersion: strconv.FormatInt(int64(rev), 10), ResourceVersionMatch: storage.MatchNotOlderThan}
}

func (n namespaceStore) Empty(ctx context.Context, namespace string, at namespaces.Revision) (empty, waiting bool, err error) {
	return n.a.emptyNamespace(ctx, namespace, atRevision(at))
}

func (n namespaceStore) Finalize(ctx context.Context, namespace string) error {
	return n.a.finalizeNamespace(ctx, namespace)
}

// emptyNamespace deletes what is in a namespace and reports whether nothing was left, and whether it
// is waiting for objects with finalizers.
func (a *API) emptyNamespace(ctx context.Context, namespace string, at storage.ListOptions) (empty, waiting bool, err error) {
	empty = true
	// Every version of a resource reads the same objects: list each resource once.
	seen := map[schema.GroupResource]bool{}
	for key, s := range *a.scopes.Load() {
		// A resource stored as another's (events.k8s.io events) has the other's objects: once for both.
		if key.subresource != "" || !s.Res.Namespaced || seen[s.Storage] {
			continue
		}
		seen[s.Storage] = true
		res, err := s.Backend.List(ctx, s.Prefix(namespace), at)
		if err != nil {
			return false, false, err
		}
		for _, kv := range res.Items {
			empty = false
			marked, err := a.deleteStored(ctx, s, kv.Key)
			if err != nil {
				return false, false, err
			}
			waiting = waiting || marked
		}
	}
	return empty, waiting, nil
}

// deleteStored deletes the object at key, or marks it for deletion when it has finalizers (marked).
// An object already gone is no error.
func (a *API) deleteStored(ctx context.Context, s *scope, key string) (marked bool, err error) {
	var apiVersion string
	_, err = s.Backend.Delete(ctx, key, func(current storage.KeyValue) error {
		var m store.StoredMeta
		if err := json.Unmarshal(current.Value, &m); err != nil {
			return err
		}
		apiVersion = m.APIVersion
		if len(m.Metadata.Finalizers) > 0 {
			return store.ErrGraceful
		}
		return nil
	})
	if errors.Is(err, store.ErrGraceful) {
		marked = true
		_, err = a.versionScope(s, apiVersion).store.MarkDeleted(ctx, key)
	}
	if err != nil && !storage.IsNotFound(err) {
		return marked, err
	}
	return marked, nil
}

// versionScope returns the scope of s's resource at the version an object is stored as, so that
// marking the object for deletion leaves its apiVersion as it is; s when that version is not served.
func (a *API) versionScope(s *scope, apiVersion string) *scope {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return s
	}
	if vs, ok := (*a.scopes.Load())[scopeKey{s.GVR.Group, gv.Version, s.GVR.Resource, ""}]; ok {
		return vs
	}
	return s
}

// finalizeNamespace removes the "kubernetes" finalizer of an emptied namespace and deletes it once no
// finalizer is left.
func (a *API) finalizeNamespace(ctx context.Context, name string) error {
	s := a.namespaces
	key := s.Key("", name)
	kv, err := s.Backend.GuaranteedUpdate(ctx, key, func(current storage.KeyValue) ([]byte, error) {
		var ns corev1.Namespace
		if err := json.Unmarshal(current.Value, &ns); err != nil {
			return nil, err
		}
		var kept []corev1.FinalizerName
		for _, f := range ns.Spec.Finalizers {
			if f != corev1.FinalizerKubernetes {
				kept = append(kept, f)
			}
		}
		if len(kept) == len(ns.Spec.Finalizers) {
			return current.Value, nil
		}
		ns.Spec.Finalizers = kept
		return s.store.Encode(&ns)
	}, storage.UpdateOptions{})
	if err != nil {
		if storage.IsNotFound(err) {
			return nil
		}
		return err
	}
	var m store.StoredMeta
	if err := json.Unmarshal(kv.Value, &m); err != nil {
		return err
	}
	if len(m.Spec.Finalizers) > 0 || len(m.Metadata.Finalizers) > 0 {
		return nil
	}
	if err := s.store.DeleteAtRevision(ctx, key, kv.ModRevision); err != nil {
		return err
	}
	a.cfg.Logger.Info("namespace deleted", "namespace", name)
	return nil
}

// notifyNamespaceChanged wakes the namespace controller (namespaceStore.Changes) without blocking.
func (a *API) notifyNamespaceChanged() {
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// namespaceMarked is told of a Namespace this server marked for deletion: creates into it check with a
// consistent read for a while, and the namespace controller wakes.
func (a *API) namespaceMarked(name string, when time.Time) {
	a.recentlyDeleted.add(name, when)
	a.notifyNamespaceChanged()
}
