package garbagecollector

import (
	"context"
	"errors"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
)

// orphanConcurrency bounds the patches one orphaning sends at once (kube starts a goroutine per
// dependent; ten thousand dependents would be ten thousand goroutines).
const orphanConcurrency = 16

// attemptToOrphanWorker handles one node of attemptToOrphan: it removes the owner's reference from
// every dependent the graph knows, then the owner's orphan finalizer (kube's attemptToOrphanWorker).
func (r *run) attemptToOrphanWorker(ctx context.Context, owner *node) outcome {
	r.g.mu.Lock()
	if r.g.nodes[owner.uid] != owner {
		r.g.mu.Unlock()
		return forget
	}
	id := owner.identity()
	dependents := make([]identity, 0, len(owner.dependents))
	for d := range owner.dependents {
		dependents = append(dependents, d.identity())
	}
	r.g.mu.Unlock()
	if err := r.orphanDependents(ctx, id, dependents); err != nil {
		if ctx.Err() == nil {
			r.log.Warn("orphaning dependents failed; retrying", "owner", id.String(), "err", err)
		}
		return requeue
	}
	removed, err := r.api.removeFinalizer(ctx, id, finalizerOrphanDependents)
	if err != nil {
		if ctx.Err() == nil {
			r.log.Warn("removing the orphan finalizer failed; retrying", "owner", id.String(), "err", err)
		}
		return requeue
	}
	if removed {
		r.metrics.finalized.WithLabelValues(finalizerOrphanDependents).Inc()
	}
	return forget
}

// orphanDependents removes the reference to owner from each dependent, a few at a time. A
// dependent already gone is no error.
func (r *run) orphanDependents(ctx context.Context, owner identity, dependents []identity) error {
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
		sem  = make(chan struct{}, orphanConcurrency)
	)
	for _, dep := range dependents {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return ctx.Err()
		}
		wg.Go(func() {
			defer func() { <-sem }()
			err := r.api.deleteOwnerRefs(ctx, dep, []types.UID{owner.UID})
			if err != nil && !apierrors.IsNotFound(err) {
				mu.Lock()
				errs = append(errs, fmt.Errorf("orphaning %s failed: %w", dep, err))
				mu.Unlock()
				return
			}
			if err == nil {
				r.metrics.refsRemoved.Inc()
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		return fmt.Errorf("failed to orphan dependents of owner %s: %w", owner, errors.Join(errs...))
	}
	return nil
}
