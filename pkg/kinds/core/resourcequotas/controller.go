package resourcequotas

// Ported from k8s.io/kubernetes v1.37.2 pkg/controller/resourcequota/resource_quota_controller.go
// and cmd/kube-controller-manager/app/core.go (newResourceQuotaController). Where it differs:
//   - it logs through slog and stops with its ctx;
//   - every run builds its own queues, monitors and informers, so that a replica that loses the
//     controllers' Lease and wins it back starts clean (the shared ResourceQuota informer stays, and
//     the handler a run adds goes with the run);
//   - its informers are metadata informers but for services, whose evaluator reads their spec: kube
//     gives it metadata informers for every resource without a typed informer
//     (ObjectOrMetadataInformerFactory), and apictl's counted resources (ConfigMaps, Secrets, any
//     count/<resource>.<group>) need nothing but metadata. Whole objects, decoded, cost a million
//     custom objects 3.3 GB of heap (issue 38's scale run);
//   - full resyncs come from enqueueAll only (kube adds the same period to its informer handler);
//   - a status write that leaves status.hard apart from spec.hard is corrected at once, not at the
//     next full resync (see handlers).

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	quota "k8s.io/apiserver/pkg/quota/v1"
	"k8s.io/apiserver/pkg/quota/v1/generic"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	coreinformers "k8s.io/client-go/informers/core/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/apictl/apictl/pkg/controllers/synced"
	"github.com/apictl/apictl/pkg/kinds"
)

// ControllerName is kube-controller-manager's name for the quota controller.
const ControllerName = "resourcequota-controller"

// kube-controller-manager's defaults.
const (
	// resyncPeriod is --resource-quota-sync-period: every quota is recalculated this often.
	resyncPeriod = 5 * time.Minute
	// workers is --concurrent-resource-quota-syncs.
	workers = 5
	// discoveryPeriod is how often the served resources are looked up, for monitors of new ones.
	discoveryPeriod = 30 * time.Second
	// startRetry spaces the attempts of a run to start.
	startRetry = 5 * time.Second
)

// newController builds the resourcequota-controller: it asks for the shared ResourceQuota informer
// now, so that the server starts it; each run does the rest.
func newController(c kinds.ControllerContext) (func(ctx context.Context), error) {
	rqs := c.Informers.Core().V1().ResourceQuotas()
	rqs.Informer()
	log := c.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return func(ctx context.Context) {
		dyn := dynamicinformer.NewDynamicSharedInformerFactory(c.Dynamic, 0)
		defer dyn.Shutdown()
		var meta metadatainformer.SharedInformerFactory // none: every resource's objects whole
		if c.Metadata != nil {
			meta = metadatainformer.NewSharedInformerFactory(c.Metadata, 0)
			defer meta.Shutdown()
		}
		discoveryFunc := c.Client.Discovery().ServerPreferredNamespacedResources
		var rq *quotaController
		// Discovery fails only while the server is not serving yet: try again until it does.
		err := wait.PollUntilContextCancel(ctx, startRetry, true, func(ctx context.Context) (bool, error) {
			var err error
			rq, err = newQuotaController(ctx, controllerOptions{
				quotaClient: c.Client.CoreV1(), rqInformer: rqs, discoveryFunc: discoveryFunc,
				informers: runSource{objects: dyn, metadata: meta, rqs: rqs}, logger: log,
			})
			if err != nil {
				log.Warn("starting the quota controller", "err", err)
			}
			return err == nil, nil
		})
		if err != nil {
			return // ctx ended
		}
		var wg sync.WaitGroup
		wg.Go(func() { rq.Run(ctx, workers) })
		wg.Go(func() { rq.Sync(ctx, discoveryFunc, discoveryPeriod) })
		wg.Wait()
	}, nil
}

// informerSource gives the monitors and the evaluators their informers (kube's
// informerfactory.InformerFactory).
type informerSource interface {
	ForResource(schema.GroupVersionResource) (informers.GenericInformer, error)
	Start(stop <-chan struct{})
}

// runSource serves services from one run's dynamic informers, ResourceQuotas from the shared
// informer whose events drive the controller, and every other resource from the run's metadata
// informers. ResourceQuotas: a quota counts itself (the resourcequotas resource), and counted from a
// second cache it could be missing there when its own add event is handled, as happened with three
// replicas, leaving status.used at 0 until the next full resync. kube has one informer per resource
// for both.
type runSource struct {
	objects  dynamicinformer.DynamicSharedInformerFactory
	metadata metadatainformer.SharedInformerFactory
	rqs      coreinformers.ResourceQuotaInformer
}

var resourceQuotas = corev1.SchemeGroupVersion.WithResource("resourcequotas")

func (s runSource) ForResource(gvr schema.GroupVersionResource) (informers.GenericInformer, error) {
	switch {
	case gvr == resourceQuotas && s.rqs != nil:
		return sharedQuotas{s.rqs.Informer()}, nil
	case gvr == servicesResource || s.metadata == nil:
		return s.objects.ForResource(gvr), nil
	}
	inf := s.metadata.ForResource(gvr)
	// Counting needs no managed fields, the larger half of most objects' metadata: kept, a million
	// custom objects' would hold hundreds of MiB in this cache. A second ask for the resource finds
	// the informer started, and the transform set.
	_ = inf.Informer().SetTransform(trimManagedFields)
	return inf, nil
}

// trimManagedFields drops an object's managed fields before the informer caches it.
func trimManagedFields(obj any) (any, error) {
	if m, ok := obj.(metav1.Object); ok {
		m.SetManagedFields(nil)
	}
	return obj, nil
}

// sharedQuotas is the shared ResourceQuota informer as a generic one.
type sharedQuotas struct{ inf cache.SharedIndexInformer }

func (s sharedQuotas) Informer() cache.SharedIndexInformer { return s.inf }
func (s sharedQuotas) Lister() cache.GenericLister {
	return cache.NewGenericLister(s.inf.GetIndexer(), resourceQuotas.GroupResource())
}

func (s runSource) Start(stop <-chan struct{}) {
	s.objects.Start(stop)
	if s.metadata != nil {
		s.metadata.Start(stop)
	}
}

// namespacedResourcesFunc lists the namespaced resources the server serves.
type namespacedResourcesFunc func() ([]*metav1.APIResourceList, error)

type controllerOptions struct {
	quotaClient   corev1client.ResourceQuotasGetter
	rqInformer    coreinformers.ResourceQuotaInformer
	discoveryFunc namespacedResourcesFunc
	informers     informerSource
	logger        *slog.Logger
	// resync is the full recalculation period; 0 is resyncPeriod.
	resync time.Duration
}

// quotaController keeps status.hard and status.used of every ResourceQuota.
type quotaController struct {
	log      *slog.Logger
	rqClient corev1client.ResourceQuotasGetter
	rqLister corelisters.ResourceQuotaLister
	rqInf    cache.SharedIndexInformer
	synced   []cache.InformerSynced
	// queue and missingUsageQueue hold quota keys, at most once each: they are bounded by the
	// number of quotas. A quota whose status lacks usage goes to the second, served first.
	queue             workqueue.TypedRateLimitingInterface[string]
	missingUsageQueue workqueue.TypedRateLimitingInterface[string]
	resync            time.Duration
	registry          quota.Registry
	monitor           *quotaMonitor
	// workerLock keeps the workers out while the monitors change.
	workerLock sync.RWMutex
}

func newQuotaController(ctx context.Context, o controllerOptions) (*quotaController, error) {
	resources, err := quotableResources(o.discoveryFunc)
	if discovery.IsGroupDiscoveryFailedError(err) {
		o.logger.Warn("initial discovery of the quotable resources failed in part; the next sync retries", "err", err)
	} else if err != nil {
		return nil, err
	}
	// The evaluators with their own rules are for what is served now; the monitors add plain
	// counts for what comes later.
	cfg := Configuration(func(gvr schema.GroupVersionResource) bool {
		_, ok := resources[gvr]
		return ok
	}, generic.ListerFuncForResourceFunc(o.informers.ForResource))
	rq := &quotaController{
		log:      o.logger,
		rqClient: o.quotaClient,
		rqLister: o.rqInformer.Lister(),
		rqInf:    o.rqInformer.Informer(),
		synced:   []cache.InformerSynced{o.rqInformer.Informer().HasSynced},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "resourcequota_primary"}),
		missingUsageQueue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "resourcequota_priority"}),
		resync:   o.resync,
		registry: generic.NewRegistry(cfg.Evaluators()),
	}
	if rq.resync == 0 {
		rq.resync = resyncPeriod
	}
	rq.monitor = newQuotaMonitor(o.informers, cfg.IgnoredResources(), rq.replenishQuota, rq.registry, updateFilter, o.logger)
	if err := rq.monitor.SyncMonitors(resources); err != nil {
		rq.log.Warn("some quota monitors could not be made", "err", err)
	}
	rq.synced = append(rq.synced, rq.monitor.IsSynced)
	return rq, nil
}

func (rq *quotaController) enqueueAll() {
	rqs, err := rq.rqLister.List(labels.Everything())
	if err != nil {
		rq.log.Error("listing resource quotas for a full recalculation", "err", err)
		return
	}
	for _, q := range rqs {
		rq.queue.Add(key(q))
	}
}

func key(q *corev1.ResourceQuota) string { return q.Namespace + "/" + q.Name }

// enqueue takes a quota or a deleted quota's tombstone.
func (rq *quotaController) enqueue(obj any) {
	k, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		rq.log.Error("no key for a resource quota", "err", err)
		return
	}
	rq.queue.Add(k)
}

// addQuota puts a quota whose status lacks what its spec asks for in the priority queue.
func (rq *quotaController) addQuota(q *corev1.ResourceQuota) {
	if !apiequality.Semantic.DeepEqual(q.Spec.Hard, q.Status.Hard) {
		rq.missingUsageQueue.Add(key(q))
		return
	}
	for constraint := range q.Status.Hard {
		if _, found := q.Status.Used[constraint]; found {
			continue
		}
		for _, e := range rq.registry.List() {
			if len(e.MatchingResources([]corev1.ResourceName{constraint})) > 0 {
				rq.missingUsageQueue.Add(key(q))
				return
			}
		}
	}
	rq.queue.Add(key(q))
}

func (rq *quotaController) handlers() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if q, ok := obj.(*corev1.ResourceQuota); ok {
				rq.addQuota(q)
			}
		},
		// A change of spec.hard matters, and (unlike kube) a status whose hard limits someone else
		// wrote apart from the spec: admission enforces status.hard, and kube leaves it wrong until
		// the next full resync (up to 5 minutes). Other status changes are this controller's and
		// admission's own, and recalculating on each would count a namespace's objects on every write.
		UpdateFunc: func(oldObj, newObj any) {
			o, ok1 := oldObj.(*corev1.ResourceQuota)
			n, ok2 := newObj.(*corev1.ResourceQuota)
			if ok1 && ok2 && (!quota.Equals(o.Spec.Hard, n.Spec.Hard) || !quota.Equals(n.Spec.Hard, n.Status.Hard)) {
				rq.addQuota(n)
			}
		},
		DeleteFunc: rq.enqueue,
	}
}

// worker processes keys of queue until it shuts down.
func (rq *quotaController) worker(ctx context.Context, queue workqueue.TypedRateLimitingInterface[string]) {
	for {
		k, quit := queue.Get()
		if quit {
			return
		}
		func() {
			defer queue.Done(k)
			rq.workerLock.RLock()
			defer rq.workerLock.RUnlock()
			if err := rq.syncFromKey(ctx, k); err != nil {
				if ctx.Err() == nil {
					rq.log.Warn("syncing resource quota", "quota", k, "err", err)
				}
				queue.AddRateLimited(k)
				return
			}
			queue.Forget(k)
		}()
	}
}

// Run runs the monitors and the workers until ctx ends, and waits for them.
func (rq *quotaController) Run(ctx context.Context, workers int) {
	reg, err := rq.rqInf.AddEventHandler(rq.handlers())
	if err != nil {
		rq.log.Error("watching resource quotas", "err", err)
		return
	}
	defer func() { _ = rq.rqInf.RemoveEventHandler(reg) }()
	var wg sync.WaitGroup
	defer func() {
		rq.missingUsageQueue.ShutDown()
		rq.queue.ShutDown()
		wg.Wait()
	}()
	wg.Go(func() { rq.monitor.Run(ctx) })
	if !synced.Wait(ctx, rq.synced...) {
		return
	}
	for range workers {
		wg.Go(func() { rq.worker(ctx, rq.queue) })
		wg.Go(func() { rq.worker(ctx, rq.missingUsageQueue) })
	}
	wg.Go(func() { wait.Until(rq.enqueueAll, rq.resync, ctx.Done()) })
	<-ctx.Done()
}

func (rq *quotaController) syncFromKey(ctx context.Context, k string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(k)
	if err != nil {
		return err
	}
	q, err := rq.rqLister.ResourceQuotas(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading resource quota %s from the informer: %w", k, err)
	}
	return rq.syncQuota(ctx, q)
}

// syncQuota recalculates a quota's usage and writes its status when it changed.
func (rq *quotaController) syncQuota(ctx context.Context, q *corev1.ResourceQuota) error {
	// The status is dirty when the hard limits moved, or on the first sync.
	dirty := !apiequality.Semantic.DeepEqual(q.Spec.Hard, q.Status.Hard) || q.Status.Hard == nil || q.Status.Used == nil
	used := corev1.ResourceList{}
	if q.Status.Used != nil {
		used = quota.Add(corev1.ResourceList{}, q.Status.Used)
	}
	hard := quota.Add(corev1.ResourceList{}, q.Spec.Hard)
	var errs []error
	newUsage, err := quota.CalculateUsage(q.Namespace, q.Spec.Scopes, hard, rq.registry, q.Spec.ScopeSelector)
	if err != nil {
		// Write what could be measured anyway, and report the rest.
		errs = append(errs, err)
	}
	maps.Copy(used, newUsage)
	used = quota.Mask(used, quota.ResourceNames(hard))
	usage := q.DeepCopy()
	usage.Status = corev1.ResourceQuotaStatus{Hard: hard, Used: used}
	dirty = dirty || !quota.Equals(usage.Status.Used, q.Status.Used)
	if dirty {
		if _, err := rq.rqClient.ResourceQuotas(usage.Namespace).UpdateStatus(ctx, usage, metav1.UpdateOptions{}); err != nil {
			errs = append(errs, fmt.Errorf("updating the status of resource quota %s/%s: %w", q.Namespace, q.Name, err))
		}
	}
	return utilerrors.NewAggregate(errs)
}

// replenishQuota recalculates the quotas of namespace that count groupResource: one of its objects
// was deleted, or changed in a way that changes its usage.
func (rq *quotaController) replenishQuota(groupResource schema.GroupResource, namespace string) {
	e := rq.registry.Get(groupResource)
	if e == nil {
		return
	}
	qs, err := rq.rqLister.ResourceQuotas(namespace).List(labels.Everything())
	if err != nil {
		rq.log.Error("listing the resource quotas of a namespace", "namespace", namespace, "err", err)
		return
	}
	for _, q := range qs {
		if len(e.MatchingResources(quota.ResourceNames(q.Status.Hard))) > 0 {
			rq.queue.Add(key(q))
		}
	}
}

// Sync follows discovery every period, and changes the monitors when the quotable resources change.
func (rq *quotaController) Sync(ctx context.Context, discoveryFunc namespacedResourcesFunc, period time.Duration) {
	old := map[schema.GroupVersionResource]struct{}{}
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		resources, err := quotableResources(discoveryFunc)
		if err != nil {
			failed, partial := discovery.GroupDiscoveryFailedErrorGroups(err)
			if !partial || len(resources) == 0 {
				rq.log.Warn("discovering the quotable resources", "err", err)
				return
			}
			// Keep following the resources of groups that failed this time.
			for gvr := range old {
				if _, ok := failed[gvr.GroupVersion()]; ok {
					resources[gvr] = struct{}{}
				}
			}
		}
		if maps.Equal(old, resources) {
			return
		}
		rq.workerLock.Lock()
		defer rq.workerLock.Unlock()
		if err := rq.monitor.SyncMonitors(resources); err != nil {
			rq.log.Warn("syncing the quota monitors", "err", err)
			return
		}
		rq.monitor.StartMonitors()
		old = resources
		// Bounded: a resource whose informer never lists must not hold the workers forever; the
		// informers keep trying meanwhile.
		syncCtx, cancel := context.WithTimeout(ctx, period)
		defer cancel()
		if !synced.Wait(syncCtx, rq.monitor.IsSynced) && ctx.Err() == nil {
			rq.log.Warn("timed out waiting for the quota monitors to sync")
		}
	}, period)
}

// quotableResources are the namespaced resources quota can count: those that can be created,
// listed, watched and deleted. It may return resources and an error of the groups that failed.
func quotableResources(discoveryFunc namespacedResourcesFunc) (map[schema.GroupVersionResource]struct{}, error) {
	possible, discoveryErr := discoveryFunc()
	if discoveryErr != nil && len(possible) == 0 {
		return nil, fmt.Errorf("discovering the served resources: %w", discoveryErr)
	}
	quotable := discovery.FilteredBy(discovery.SupportsAllVerbs{Verbs: []string{"create", "list", "watch", "delete"}}, possible)
	gvrs, err := discovery.GroupVersionResources(quotable)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("parsing the served resources: %w", err), discoveryErr)
	}
	return gvrs, discoveryErr
}
