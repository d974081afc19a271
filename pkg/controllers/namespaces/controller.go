// Package namespaces is kube-controller-manager's namespace controller: it empties each terminating
// namespace (objects with finalizers are marked and waited for), then removes the "kubernetes"
// finalizer, and the namespace is deleted. The API server's store layer does the reading and the
// deleting (Store), at one revision per sweep; this package decides when to sweep, and how many
// namespaces at once.
package namespaces

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Store is what the controller sweeps through: the server's own store, which reads at a revision of
// its watch caches and deletes as a DELETE does.
type Store interface {
	// WatchNamespaces calls changed whenever a namespace may have begun terminating, and after every
	// relist, until ctx ends. changed must not block.
	WatchNamespaces(ctx context.Context, changed func())
	// Changes is signalled when this server marks a namespace for deletion.
	Changes() <-chan struct{}
	// Terminating lists the namespaces with a deletionTimestamp, at a revision that the sweep's
	// other reads (at) are served at. A namespace it cannot read is an error returned beside the
	// names it could; at is 0 when it could read none.
	Terminating(ctx context.Context) (names []string, at Revision, err error)
	// Empty deletes what is in namespace, as it was at at, and reports whether nothing was left, and
	// whether it waits for objects with finalizers.
	Empty(ctx context.Context, namespace string, at Revision) (empty, waiting bool, err error)
	// Finalize removes the "kubernetes" finalizer of an emptied namespace and deletes it once no
	// finalizer is left.
	Finalize(ctx context.Context, namespace string) error
}

// Revision is the etcd revision a sweep reads at.
type Revision int64

// retryMin and retryMax bound how long the controller waits before it looks again at a namespace that
// is still terminating: one waiting for objects with finalizers, or whose sweep failed.
const (
	retryMin = 100 * time.Millisecond
	retryMax = 5 * time.Second
)

// workers is how many terminating namespaces are emptied at once: kube-controller-manager's
// --concurrent-namespace-syncs default. One at a time fell behind a test suite's namespace churn (a
// namespace takes a list per namespaced resource, a delete per object and the finalize).
const workers = 10

// Run sweeps terminating namespaces until ctx ends, and returns once its goroutines have stopped. It
// follows the namespaces' watch (its own deletes and those through other servers alike) and sweeps
// when one changes; it looks again only while a namespace is still terminating, backing off to
// retryMax.
func Run(ctx context.Context, st Store, log *slog.Logger) {
	wake := make(chan struct{}, 1)
	notify := func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { st.WatchNamespaces(ctx, notify) })
	retry := time.NewTimer(0)
	defer retry.Stop()
	backoff := retryMin
	for {
		select {
		case <-ctx.Done():
			return
		case <-wake:
			backoff = retryMin
		case <-st.Changes():
			backoff = retryMin
		case <-retry.C:
		}
		pending, again, err := sweep(ctx, st)
		if err != nil && ctx.Err() == nil {
			log.Warn("namespace controller: sweep failed, retrying", "err", err)
		}
		switch {
		case again && err == nil:
			// Content was just deleted: look again at once, so that a namespace goes as soon as it is empty.
			retry.Reset(0)
		case pending || err != nil:
			retry.Reset(backoff)
			backoff = min(2*backoff, retryMax)
		}
	}
}

// sweep finalizes every terminating namespace it can. It reports whether a namespace is still
// terminating afterwards (pending), and whether it removed content without removing objects marked
// for deletion (again), so that another sweep right away may finish the job.
func sweep(ctx context.Context, st Store) (pending, again bool, err error) {
	terminating, at, err := st.Terminating(ctx)
	if at == 0 {
		return false, false, err
	}
	var mu sync.Mutex
	errs := []error{err}
	var wg sync.WaitGroup
	work := make(chan string)
	for range min(workers, len(terminating)) {
		wg.Go(func() {
			for name := range work {
				p, ag, err := sweepOne(ctx, st, name, at)
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

// sweepOne empties one terminating namespace and finalizes it once nothing is left: pending and
// again are sweep's for this namespace.
func sweepOne(ctx context.Context, st Store, name string, at Revision) (pending, again bool, err error) {
	empty, waiting, err := st.Empty(ctx, name, at)
	if err != nil {
		return false, false, fmt.Errorf("emptying namespace %s: %w", name, err)
	}
	if !empty {
		return true, !waiting, nil
	}
	if err := st.Finalize(ctx, name); err != nil {
		return false, false, fmt.Errorf("finalizing namespace %s: %w", name, err)
	}
	return false, false, nil
}
