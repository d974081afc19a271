package resourcequotas

// Ported from k8s.io/kubernetes v1.37.2 pkg/controller/resourcequota/resource_quota_monitor.go.
// Where it differs: a change is queued as its resource and namespace, not as the event, so that the
// queue holds each pair once however many objects change (kube queues every event: a burst of
// deletes grows it without bound, and each would recalculate the same quotas); and a monitor's
// handler is removed from its informer when the monitor stops.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	quota "k8s.io/apiserver/pkg/quota/v1"
	"k8s.io/apiserver/pkg/quota/v1/generic"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// change is a resource's objects in a namespace that changed in a way that may change usage.
type change struct {
	gr        schema.GroupResource
	namespace string
}

// replenishmentFunc is told of a change that may require quotas to be recalculated.
type replenishmentFunc func(gr schema.GroupResource, namespace string)

// updateFilterFunc reports whether an update changes usage.
type updateFilterFunc func(gvr schema.GroupVersionResource, oldObj, newObj any) bool

// quotaMonitor follows every quotable resource and tells the controller of deletes and of the
// updates that change usage.
type quotaMonitor struct {
	log       *slog.Logger
	informers informerSource
	ignored   map[schema.GroupResource]struct{}
	replenish replenishmentFunc
	registry  quota.Registry
	filter    updateFilterFunc

	// changes holds each resource and namespace once: bounded by their number.
	changes workqueue.TypedRateLimitingInterface[change]

	mu       sync.RWMutex
	monitors map[schema.GroupVersionResource]*monitor
	// stop is the running monitors' stop channel; nil until Run.
	stop    <-chan struct{}
	running bool
}

// monitor is one resource's informer and the handler the quota monitor added to it.
type monitor struct {
	informer cache.SharedIndexInformer
	handler  cache.ResourceEventHandlerRegistration
}

func (m *monitor) remove() { _ = m.informer.RemoveEventHandler(m.handler) }

func newQuotaMonitor(inf informerSource, ignored map[schema.GroupResource]struct{}, replenish replenishmentFunc,
	registry quota.Registry, filter updateFilterFunc, log *slog.Logger) *quotaMonitor {
	return &quotaMonitor{
		log: log, informers: inf, ignored: ignored, replenish: replenish, registry: registry, filter: filter,
		changes: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[change](),
			workqueue.TypedRateLimitingQueueConfig[change]{Name: "resource_quota_controller_resource_changes"}),
	}
}

func (qm *quotaMonitor) enqueue(gvr schema.GroupVersionResource, obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	qm.changes.Add(change{gr: gvr.GroupResource(), namespace: m.GetNamespace()})
}

func (qm *quotaMonitor) monitorFor(gvr schema.GroupVersionResource) (*monitor, error) {
	shared, err := qm.informers.ForResource(gvr)
	if err != nil {
		return nil, fmt.Errorf("no informer for %s: %w", gvr, err)
	}
	reg, err := shared.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(oldObj, newObj any) {
			if qm.filter != nil && qm.filter(gvr, oldObj, newObj) {
				qm.enqueue(gvr, newObj)
			}
		},
		DeleteFunc: func(obj any) { qm.enqueue(gvr, obj) },
	})
	if err != nil {
		return nil, fmt.Errorf("watching %s: %w", gvr, err)
	}
	return &monitor{informer: shared.Informer(), handler: reg}, nil
}

// SyncMonitors makes the monitors those of resources: new ones are made (not started: see
// StartMonitors), gone ones stopped. A resource without an evaluator gets an object count one.
func (qm *quotaMonitor) SyncMonitors(resources map[schema.GroupVersionResource]struct{}) error {
	qm.mu.Lock()
	defer qm.mu.Unlock()
	old := qm.monitors
	current := map[schema.GroupVersionResource]*monitor{}
	var errs []error
	for gvr := range resources {
		if _, ok := qm.ignored[gvr.GroupResource()]; ok {
			continue
		}
		if m, ok := old[gvr]; ok {
			current[gvr] = m
			delete(old, gvr)
			continue
		}
		m, err := qm.monitorFor(gvr)
		if err != nil {
			errs = append(errs, fmt.Errorf("no quota monitor for %s: %w", gvr, err))
			continue
		}
		if qm.registry.Get(gvr.GroupResource()) == nil {
			lister := generic.ListResourceUsingListerFunc(generic.ListerFuncForResourceFunc(qm.informers.ForResource), gvr)
			qm.registry.Add(generic.NewObjectCountEvaluator(gvr.GroupResource(), lister, ""))
		}
		current[gvr] = m
	}
	qm.monitors = current
	for _, m := range old {
		m.remove()
	}
	return errors.Join(errs...)
}

// StartMonitors starts the informers of the monitors not started yet; before Run it does nothing.
func (qm *quotaMonitor) StartMonitors() {
	qm.mu.Lock()
	defer qm.mu.Unlock()
	if !qm.running {
		return
	}
	qm.informers.Start(qm.stop)
}

// IsSynced reports whether there are monitors and all of their informers have listed.
func (qm *quotaMonitor) IsSynced() bool {
	qm.mu.RLock()
	defer qm.mu.RUnlock()
	if len(qm.monitors) == 0 {
		return false
	}
	for _, m := range qm.monitors {
		if !m.informer.HasSynced() {
			return false
		}
	}
	return true
}

// Run starts the monitors and hands their changes to the controller until ctx ends, then removes
// every monitor's handler.
func (qm *quotaMonitor) Run(ctx context.Context) {
	qm.mu.Lock()
	qm.stop, qm.running = ctx.Done(), true
	qm.mu.Unlock()
	qm.StartMonitors()

	done := make(chan struct{})
	go func() {
		defer close(done)
		for qm.processChange() {
		}
	}()
	<-ctx.Done()
	qm.changes.ShutDown()
	<-done

	qm.mu.Lock()
	defer qm.mu.Unlock()
	qm.running = false
	for _, m := range qm.monitors {
		m.remove()
	}
	qm.monitors = nil
}

func (qm *quotaMonitor) processChange() bool {
	c, quit := qm.changes.Get()
	if quit {
		return false
	}
	defer qm.changes.Done(c)
	qm.replenish(c.gr, c.namespace)
	return true
}
