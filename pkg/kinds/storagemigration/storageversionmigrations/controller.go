package storageversionmigrations

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	svmv1 "k8s.io/api/storagemigration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	svmclient "k8s.io/client-go/kubernetes/typed/storagemigration/v1"
	svmlisters "k8s.io/client-go/listers/storagemigration/v1"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/apictl/apictl/pkg/controllers/synced"
	"github.com/apictl/apictl/pkg/kinds"
)

// Kube's reasons and the time a migration waits for its resource to appear in discovery.
const (
	reasonRunning   = "MigrationRunning"
	reasonSucceeded = "StorageVersionMigrationSucceeded"
	reasonFailed    = "StorageVersionMigrationFailed"
	// resourceGrace is how long after its creation a migration waits for its resource to be served
	// (a CRD just created) before it fails: kube's minute, twice its discovery resync.
	resourceGrace = time.Minute
	// mapperResetEvery is how often a miss may make the mapper read discovery again.
	mapperResetEvery = 10 * time.Second
	// workers migrate that many resources at once (kube's 5).
	workers = 5
	// pageSize is how many objects one LIST page of the migrated resource holds.
	pageSize = 500
	// progressEvery is how often a long migration writes its progress to its Running condition.
	progressEvery = 2 * time.Second
)

// controller is kube-controller-manager's storage-version-migrator-controller: kube runs it as three
// loops over the migrations (the migration runner, the resource-version controller and the
// migrator), each taking one step of a migration and writing it to status, where the next loop
// picks it up. Here the steps are those of one loop, keyed by the migrated resource so that the
// migrations of a resource run one at a time as kube's runner has them, each sync taking the next
// step of the resource's migrations (runner.go, resourceversion.go, migrator.go).
type controller struct {
	svms      svmclient.StorageVersionMigrationInterface
	lister    svmlisters.StorageVersionMigrationLister
	informer  cache.SharedIndexInformer
	dynamic   dynamic.Interface
	discovery discovery.DiscoveryInterface
	mapper    meta.ResettableRESTMapper
	log       *slog.Logger
	now       func() time.Time

	resetMu   sync.Mutex
	lastReset time.Time
}

// newController builds the migrator from the server's clients (kinds.Controller.New).
func newController(c kinds.ControllerContext) (func(ctx context.Context), error) {
	if c.Client == nil || c.Dynamic == nil || c.Informers == nil {
		return nil, errors.New("the storage version migrator needs the typed and dynamic clients and the informers")
	}
	inf := c.Informers.Storagemigration().V1().StorageVersionMigrations()
	ctrl := &controller{
		svms:      c.Client.StoragemigrationV1().StorageVersionMigrations(),
		lister:    inf.Lister(),
		informer:  inf.Informer(),
		dynamic:   c.Dynamic,
		discovery: c.Client.Discovery(),
		mapper:    restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(c.Client.Discovery())),
		log:       c.Logger,
		now:       time.Now,
	}
	if ctrl.log == nil {
		ctrl.log = slog.New(slog.DiscardHandler)
	}
	return ctrl.run, nil
}

// run migrates until ctx ends. Each run has a queue of its own and its own event handler, which
// replays every migration as added, so that a run after a lost Lease starts from what is stored.
func (c *controller) run(ctx context.Context) {
	queue := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[metav1.GroupResource](),
		workqueue.TypedRateLimitingQueueConfig[metav1.GroupResource]{Name: ControllerName})
	enqueue := func(obj any) {
		if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tombstone.Obj
		}
		if svm, ok := obj.(*svmv1.StorageVersionMigration); ok {
			queue.Add(svm.Spec.Resource)
		}
	}
	reg, err := c.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
		DeleteFunc: enqueue,
	})
	if err != nil {
		c.log.Error("watching storage version migrations", "err", err)
		return
	}
	var wg sync.WaitGroup
	defer func() {
		queue.ShutDown()
		wg.Wait()
		if err := c.informer.RemoveEventHandler(reg); err != nil {
			c.log.Warn("removing the storage version migrations' event handler", "err", err)
		}
	}()
	if !synced.Wait(ctx, reg.HasSynced) {
		return
	}
	for range workers {
		wg.Go(func() {
			for c.processNext(ctx, queue) {
			}
		})
	}
	<-ctx.Done()
}

// requeue is a sync's answer that the resource's migrations need another look after a while,
// without an error.
type requeue struct{ after time.Duration }

func (r requeue) Error() string { return fmt.Sprintf("again in %s", r.after) }

func (c *controller) processNext(ctx context.Context, queue workqueue.TypedRateLimitingInterface[metav1.GroupResource]) bool {
	gr, quit := queue.Get()
	if quit {
		return false
	}
	defer queue.Done(gr)
	err := c.sync(ctx, gr)
	var again requeue
	switch {
	case err == nil:
		queue.Forget(gr)
	case errors.As(err, &again):
		queue.Forget(gr)
		queue.AddAfter(gr, again.after)
	case ctx.Err() != nil:
	default:
		level := slog.LevelWarn
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			level = slog.LevelDebug // the migration changed or went: the informer brings the news
		}
		c.log.Log(ctx, level, "migrating storage failed; retrying", "resource", gr.String(), "err", err)
		if delay, ok := apierrors.SuggestsClientDelay(err); ok {
			queue.AddAfter(gr, max(time.Duration(delay)*time.Second, time.Second))
			return true
		}
		queue.AddRateLimited(gr)
	}
	return true
}

// sync takes the next step of the migrations of gr: it closes those that ended (the runner's
// cleanup), starts the oldest waiting one when none runs (the runner's promotion), records the
// resourceVersion the running one migrates up to, or migrates.
func (c *controller) sync(ctx context.Context, gr metav1.GroupResource) error {
	all, err := c.lister.List(labels.Everything())
	if err != nil {
		return fmt.Errorf("listing storage version migrations: %w", err)
	}
	cleanup, active, promote := plan(all, gr)
	for _, svm := range cleanup {
		if err := c.finish(ctx, svm); err != nil {
			return err
		}
	}
	switch {
	case active == nil && promote == nil:
		return nil
	case active == nil:
		// The write brings the migration back, running, for its next step.
		return c.markAsActive(ctx, promote)
	case active.Status.ResourceVersion == "":
		return c.recordResourceVersion(ctx, active)
	}
	return c.migrate(ctx, active)
}

// writeStatus writes svm's status and returns what was stored.
func (c *controller) writeStatus(ctx context.Context, svm *svmv1.StorageVersionMigration) (*svmv1.StorageVersionMigration, error) {
	out, err := c.svms.UpdateStatus(ctx, svm, metav1.UpdateOptions{})
	if err != nil {
		return nil, fmt.Errorf("writing the status of storage version migration %s: %w", svm.Name, err)
	}
	return out, nil
}

// untilGraceEnds is how long svm may still wait for its resource; 0 when it has waited enough.
func (c *controller) untilGraceEnds(svm *svmv1.StorageVersionMigration) time.Duration {
	return max(svm.CreationTimestamp.Add(resourceGrace).Sub(c.now()), 0)
}

// resetMapperIfStale makes the mapper read discovery again, at most every mapperResetEvery, so that
// a resource served since the last read (a new CRD) is found.
func (c *controller) resetMapperIfStale() {
	c.resetMu.Lock()
	defer c.resetMu.Unlock()
	if c.now().Sub(c.lastReset) > mapperResetEvery {
		c.mapper.Reset()
		c.lastReset = c.now()
	}
}
