// Package garbagecollector is kube-controller-manager's garbage collector, in-process: it keeps a
// dependency graph of every object of every served resource from their ownerReferences, fed by the
// server's own watch caches (no informers, no polling), and
//   - deletes dependents whose owners are all gone (an owner is looked up by UID: a live object
//     with the owner's name and another UID does not own anything), and removes the references to
//     absent owners from dependents that keep another;
//   - finishes foreground deletions (an owner with the foregroundDeletion finalizer goes once no
//     dependent with blockOwnerDeletion is left) and orphanings (an owner with the orphan finalizer
//     loses its references from its dependents, then the finalizer).
//
// Its writes go through the API, as any client's. It is restartable: Run builds everything from
// nothing and leaves nothing behind, so that it can run only while its replica holds a Lease.
package garbagecollector

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/dynamic"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/util/workqueue"
)

// DefaultWorkers is the default number of workers of each queue. kube's --concurrent-gc-syncs is
// 20; in-process writes are cheap and the machine's cores are what bounds them.
const DefaultWorkers = 20

// syncTimeout bounds the wait for the first lists before the workers start, as kube's initial
// sync timeout does: a resource whose cache does not fill must not stop collection elsewhere.
const syncTimeout = 30 * time.Second

// Config is what the collector needs.
type Config struct {
	// Source says which resources are served, as they come and go.
	Source Source
	// Client reads and writes objects through the server's API.
	Client dynamic.Interface
	// Events, when set, receives the collector's events (OwnerRefInvalidNamespace).
	Events corev1client.EventsGetter
	// Workers of each queue; 0 means DefaultWorkers.
	Workers int
	// Registerer, when set, receives the collector's metrics.
	Registerer prometheus.Registerer
	Logger     *slog.Logger
}

// Collector is the garbage collector. Create it with New, run it with Run.
type Collector struct {
	cfg     Config
	metrics *metrics
	log     *slog.Logger

	// current is the graph of the run in progress, for GraphSize.
	current atomic.Pointer[graph]
}

// New checks cfg and registers the metrics.
func New(cfg Config) (*Collector, error) {
	if cfg.Source == nil || cfg.Client == nil {
		return nil, errors.New("the garbage collector needs a source of resources and a client")
	}
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultWorkers
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	m, err := newMetrics(cfg.Registerer)
	if err != nil {
		return nil, err
	}
	return &Collector{cfg: cfg, metrics: m, log: cfg.Logger.With("component", "garbage-collector")}, nil
}

// GraphSize returns the number of nodes of the running collector's graph (0 when not running).
func (c *Collector) GraphSize() int {
	if g := c.current.Load(); g != nil {
		return g.len()
	}
	return 0
}

// The names of the work queues, as kube's.
const (
	queueAttemptToDelete = "garbage_collector_attempt_to_delete"
	queueAttemptToOrphan = "garbage_collector_attempt_to_orphan"
)

// run is the state of one Run.
type run struct {
	*Collector
	g               *graph
	api             *api
	mapperPtr       atomic.Pointer[mapper]
	attemptToDelete workqueue.TypedRateLimitingInterface[*node]
	attemptToOrphan workqueue.TypedRateLimitingInterface[*node]
	absent          *absentCache
}

func (r *run) mapper() *mapper { return r.mapperPtr.Load() }

func (c *Collector) newQueue(name string) workqueue.TypedRateLimitingInterface[*node] {
	c.metrics.queues.depth.WithLabelValues(name).Set(0) // a queue of an earlier run may have stopped full
	return workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[*node](),
		workqueue.TypedRateLimitingQueueConfig[*node]{Name: name, MetricsProvider: c.metrics.queues})
}

// Run builds the graph from the watch caches, then collects garbage until ctx ends; it returns once
// everything it started has stopped. It may be called again after it returns.
func (c *Collector) Run(ctx context.Context) {
	// Debug level: the leader election's owner says at Info when the cluster-wide controllers,
	// this one among them, start and stop.
	c.log.Debug("starting the garbage collector")
	defer c.log.Debug("the garbage collector stopped")
	r := &run{Collector: c, absent: newAbsentCache(),
		attemptToDelete: c.newQueue(queueAttemptToDelete), attemptToOrphan: c.newQueue(queueAttemptToOrphan)}
	r.api = &api{client: c.cfg.Client, mapper: r.mapper}
	var events eventRecorder
	if c.cfg.Events != nil {
		rec := newRecorder(ctx, c.cfg.Events)
		defer rec.shutdown()
		events = rec
	}
	r.g = newGraph(r.attemptToDelete, r.attemptToOrphan, r.absent, events, func(n int) { c.metrics.graphNodes.Set(float64(n)) })
	c.current.Store(r.g)
	defer func() {
		c.current.Store(nil)
		c.metrics.graphNodes.Set(0)
	}()

	ms := newMonitors(r.g, c.log)
	var workers sync.WaitGroup
	defer func() {
		r.attemptToDelete.ShutDown()
		r.attemptToOrphan.ShutDown()
		workers.Wait()
		ms.stopAll()
	}()
	snap := c.cfg.Source.Snapshot()
	r.mapperPtr.Store(newMapper(snap.API))
	sources := ms.sync(ctx, snap.Resources)
	if !waitSynced(ctx, sources) {
		if ctx.Err() != nil {
			return
		}
		c.log.Warn("not every resource's objects were listed in time; collecting anyway")
	}
	c.log.Debug("the dependency graph is built; collecting garbage", "nodes", r.g.len())
	for range c.cfg.Workers {
		workers.Go(func() {
			for r.processNext(ctx, r.attemptToDelete, r.attemptToDeleteWorker) {
			}
		})
		workers.Go(func() {
			for r.processNext(ctx, r.attemptToOrphan, r.attemptToOrphanWorker) {
			}
		})
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-snap.Changed:
		}
		snap = c.cfg.Source.Snapshot()
		r.mapperPtr.Store(newMapper(snap.API))
		ms.sync(ctx, snap.Resources)
	}
}

// waitSynced waits until every source has listed its objects once, for at most syncTimeout.
func waitSynced(ctx context.Context, sources []*source) bool {
	t := time.NewTimer(syncTimeout)
	defer t.Stop()
	for _, s := range sources {
		select {
		case <-s.synced:
		case <-t.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// processNext handles one item of q; false once q is shut down.
func (r *run) processNext(ctx context.Context, q workqueue.TypedRateLimitingInterface[*node], work func(context.Context, *node) outcome) bool {
	n, quit := q.Get()
	if quit {
		return false
	}
	defer q.Done(n)
	if work(ctx, n) == requeue && ctx.Err() == nil {
		q.AddRateLimited(n)
	} else {
		q.Forget(n)
	}
	return true
}
