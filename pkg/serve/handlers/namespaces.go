package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

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
		if err := s.strategy.PrepareForCreate(ns, a.cfg.Now()); err != nil {
			return err
		}
		value, err := s.store.encode(ns)
		if err != nil {
			return err
		}
		if _, err := s.backend.Create(ctx, s.key("", name), value, 0); err != nil && !storage.IsAlreadyExists(err) {
			return fmt.Errorf("creating namespace %s: %w", name, err)
		}
	}
	return nil
}

// namespaceRetry bounds how long the namespace controller waits before it looks again at a namespace
// that is still terminating: one waiting for objects with finalizers, or whose sweep failed. It backs
// off from namespaceRetryMin.
const (
	namespaceRetryMin = 100 * time.Millisecond
	namespaceRetry    = 5 * time.Second
)

// RunNamespaceController empties terminating namespaces, then lets them go, until ctx ends, and
// returns once its goroutines have stopped: for each namespace with a deletionTimestamp it deletes
// every object in it (objects with finalizers are marked and waited for), then removes the
// "kubernetes" finalizer, and the namespace is deleted. It follows the namespaces' watch (its own
// deletes and those through other servers alike) and sweeps when one changes; it looks again only
// while a namespace is still terminating, backing off to namespaceRetry.
func (a *API) RunNamespaceController(ctx context.Context) {
	if a.namespaces == nil {
		return
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() {
		storage.Reflect(ctx, a.namespaces.backend, a.namespaces.prefix(""), func(reset bool, items []storage.KeyValue, deleted bool) bool {
			if reset || (!deleted && len(items) == 1 && mayBeTerminating(items[0].Value)) {
				a.notifyNamespaceChanged()
			}
			return true
		}, a.cfg.Logger.With("component", "namespace-controller"))
	})
	retry := time.NewTimer(0)
	defer retry.Stop()
	backoff := namespaceRetryMin
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.wake:
			backoff = namespaceRetryMin
		case <-retry.C:
		}
		pending, again, err := a.sweepNamespaces(ctx)
		if err != nil && ctx.Err() == nil {
			a.cfg.Logger.Warn("namespace controller: sweep failed, retrying", "err", err)
		}
		switch {
		case again && err == nil:
			// Content was just deleted: look again at once, so that a namespace goes as soon as it is empty.
			retry.Reset(0)
		case pending || err != nil:
			retry.Reset(backoff)
			backoff = min(2*backoff, namespaceRetry)
		}
	}
}

// namespaceWorkers is how many terminating namespaces are emptied at once: kube-controller-manager's
// --concurrent-namespace-syncs default. One at a time fell behind a test suite's namespace churn (a
// namespace takes a list per namespaced resource, a delete per object and the finalize).
const namespaceWorkers = 10

// sweepNamespaces finalizes every terminating namespace it can. It reports whether a namespace is still
// terminating afterwards (pending), and whether it removed content without removing objects marked
// for deletion (again), so that another sweep right away may finish the job.
//
// The sweep reads at one revision, taken with a single quorum read: its lists are then served by the
// watch caches once they have caught up with it (kube's consistent reads from cache), rather than
// each going to etcd for a revision of its own.
func (a *API) sweepNamespaces(ctx context.Context) (pending, again bool, err error) {
	s := a.namespaces
	rev, err := s.backend.CurrentRevision(ctx)
	if err != nil {
		return false, false, err
	}
	at := storage.ListOptions{ResourceVersion: strconv.FormatInt(rev, 10), ResourceVersionMatch: storage.MatchNotOlderThan}
	res, err := s.backend.List(ctx, s.prefix(""), at)
	if err != nil {
		return false, false, err
	}
	var errs []error
	var terminating []string
	for _, kv := range res.Items {
		if !mayBeTerminating(kv.Value) {
			continue
		}
		var ns corev1.Namespace
		if err := json.Unmarshal(kv.Value, &ns); err != nil {
			errs = append(errs, err)
			continue
		}
		if ns.DeletionTimestamp != nil {
			terminating = append(terminating, ns.Name)
		}
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	work := make(chan string)
	for range min(namespaceWorkers, len(terminating)) {
		wg.Go(func() {
			for name := range work {
				p, ag, err := a.sweepNamespace(ctx, name, at)
				mu.Lock()
				pending, again = pending || p, again || ag
				if err != nil {
					errs = append(errs, err)
				}
				mu.Unlock()
			}
		})
	}
	for _, name := range terminating {
		work <- name
	}
	close(work)
	wg.Wait()
	return pending, again, errors.Join(errs...)
}

// sweepNamespace empties one terminating namespace and finalizes it once nothing is left: pending and
// again are sweepNamespaces' for this namespace.
func (a *API) sweepNamespace(ctx context.Context, name string, at storage.ListOptions) (pending, again bool, err error) {
	empty, waiting, err := a.emptyNamespace(ctx, name, at)
	if err != nil {
		return false, false, fmt.Errorf("emptying namespace %s: %w", name, err)
	}
	if !empty {
		return true, !waiting, nil
	}
	if err := a.finalizeNamespace(ctx, name); err != nil {
		return false, false, fmt.Errorf("finalizing namespace %s: %w", name, err)
	}
	return false, false, nil
}

// emptyNamespace deletes what is in a namespace and reports whether nothing was left, and whether it
// is waiting for objects with finalizers.
func (a *API) emptyNamespace(ctx context.Context, namespace string, at storage.ListOptions) (empty, waiting bool, err error) {
	empty = true
	// Every version of a resource reads the same objects: list each resource once.
	seen := map[schema.GroupResource]bool{}
	for key, s := range *a.scopes.Load() {
		// A resource stored as another's (events.k8s.io events) has the other's objects: once for both.
		if key.subresource != "" || !s.res.Namespaced || seen[s.storage] {
			continue
		}
		seen[s.storage] = true
		res, err := s.backend.List(ctx, s.prefix(namespace), at)
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
	_, err = s.backend.Delete(ctx, key, func(current storage.KeyValue) error {
		var m storedMeta
		if err := json.Unmarshal(current.Value, &m); err != nil {
			return err
		}
		apiVersion = m.APIVersion
		if len(m.Metadata.Finalizers) > 0 {
			return errGraceful
		}
		return nil
	})
	if errors.Is(err, errGraceful) {
		marked = true
		_, err = a.versionScope(s, apiVersion).store.markDeleted(ctx, key)
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
	if vs, ok := (*a.scopes.Load())[scopeKey{s.gvr.Group, gv.Version, s.gvr.Resource, ""}]; ok {
		return vs
	}
	return s
}

// finalizeNamespace removes the "kubernetes" finalizer of an emptied namespace and deletes it once no
// finalizer is left.
func (a *API) finalizeNamespace(ctx context.Context, name string) error {
	s := a.namespaces
	key := s.key("", name)
	kv, err := s.backend.GuaranteedUpdate(ctx, key, func(current storage.KeyValue) ([]byte, error) {
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
		return s.store.encode(&ns)
	}, storage.UpdateOptions{})
	if err != nil {
		if storage.IsNotFound(err) {
			return nil
		}
		return err
	}
	var m storedMeta
	if err := json.Unmarshal(kv.Value, &m); err != nil {
		return err
	}
	if len(m.Spec.Finalizers) > 0 || len(m.Metadata.Finalizers) > 0 {
		return nil
	}
	if err := s.store.deleteAtRevision(ctx, key, kv.ModRevision); err != nil {
		return err
	}
	a.cfg.Logger.Info("namespace deleted", "namespace", name)
	return nil
}

// notifyNamespaceChanged wakes the namespace controller without blocking.
func (a *API) notifyNamespaceChanged() {
	select {
	case a.wake <- struct{}{}:
	default:
	}
}
