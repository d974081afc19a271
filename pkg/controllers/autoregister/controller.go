// Package autoregister keeps a Local APIService (one without spec.service) for every group version
// the server serves itself, as kube-aggregator's autoregister controller does in kube-apiserver:
// the built-in group versions are synced once when the server starts (label
// kube-aggregator.kubernetes.io/automanaged: onstart), the group versions of CRDs continuously
// (automanaged: "true"). APIServices without the label, those users create, are never touched.
package autoregister

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	apiregistrationclient "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset/typed/apiregistration/v1"
	apiregistrationinformers "k8s.io/kube-aggregator/pkg/client/informers/externalversions/apiregistration/v1"
	apiregistrationlisters "k8s.io/kube-aggregator/pkg/client/listers/apiregistration/v1"

	"github.com/apictl/apictl/pkg/controllers/synced"
)

// Kube's label and its values (k8s.io/kube-aggregator/pkg/controllers/autoregister).
const (
	// ManagedLabel says how an APIService is synced; an APIService without it is the user's.
	ManagedLabel = "kube-aggregator.kubernetes.io/automanaged"
	// ManageOnStart syncs the APIService once, when the controller starts.
	ManageOnStart = "onstart"
	// ManageContinuously syncs the APIService for as long as the controller runs.
	ManageContinuously = "true"
)

// Controller creates, updates and deletes the APIServices it is told to keep. It reads APIServices
// from an informer and writes through the API, so several servers on one etcd converge: creates
// that lose a race answer AlreadyExists, updates and deletes that lose one answer Conflict, and the
// informer brings the winner's object back for another look.
type Controller struct {
	lister apiregistrationlisters.APIServiceLister
	synced cache.InformerSynced
	client apiregistrationclient.APIServicesGetter
	log    *slog.Logger
	queue  workqueue.TypedRateLimitingInterface[string]

	mu sync.RWMutex
	// desired are the APIServices to keep, by name, with the managed label set.
	desired map[string]*apiregistrationv1.APIService
	// syncedOnce are the names synced successfully at least once.
	syncedOnce map[string]bool
	// atStart are the names that existed when the controller started; only those of them labelled
	// onstart are updated or deleted (once).
	atStart map[string]bool
}

// New returns a controller that watches informer and writes through client. Register informer's
// factory for starting before the server runs; New adds the event handler.
func New(informer apiregistrationinformers.APIServiceInformer, client apiregistrationclient.APIServicesGetter, log *slog.Logger) (*Controller, error) {
	c := newController(informer.Lister(), client, log)
	reg, err := informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.enqueueObject(obj) },
		UpdateFunc: func(_, obj any) { c.enqueueObject(obj) },
		DeleteFunc: func(obj any) { c.enqueueObject(obj) },
	})
	if err != nil {
		return nil, fmt.Errorf("watching apiservices: %w", err)
	}
	c.synced = reg.HasSynced
	return c, nil
}

func newController(lister apiregistrationlisters.APIServiceLister, client apiregistrationclient.APIServicesGetter, log *slog.Logger) *Controller {
	return &Controller{
		lister:     lister,
		client:     client,
		log:        log.With("component", "autoregister"),
		desired:    map[string]*apiregistrationv1.APIService{},
		syncedOnce: map[string]bool{},
		atStart:    map[string]bool{},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "autoregister"}),
	}
}

func (c *Controller) enqueueObject(obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	if s, ok := obj.(*apiregistrationv1.APIService); ok {
		c.queue.Add(s.Name)
	}
}

// AddAPIServiceToSyncOnStart asks for in to be created, or its spec restored, once.
func (c *Controller) AddAPIServiceToSyncOnStart(in *apiregistrationv1.APIService) {
	c.add(in, ManageOnStart)
}

// AddAPIServiceToSync asks for in to be kept as it is for as long as the controller runs.
func (c *Controller) AddAPIServiceToSync(in *apiregistrationv1.APIService) {
	c.add(in, ManageContinuously)
}

func (c *Controller) add(in *apiregistrationv1.APIService, how string) {
	s := in.DeepCopy()
	if s.Labels == nil {
		s.Labels = map[string]string{}
	}
	s.Labels[ManagedLabel] = how
	c.mu.Lock()
	c.desired[s.Name] = s
	c.mu.Unlock()
	c.queue.Add(s.Name)
}

// RemoveAPIServiceToSync stops keeping the named APIService: a managed one is deleted.
func (c *Controller) RemoveAPIServiceToSync(name string) {
	c.mu.Lock()
	delete(c.desired, name)
	c.mu.Unlock()
	c.queue.Add(name)
}

// Run waits for the informer, records the APIServices that exist, and syncs with workers until ctx
// ends; it returns when the workers have stopped.
func (c *Controller) Run(ctx context.Context, workers int) {
	defer c.queue.ShutDown()
	if !synced.Wait(ctx, c.synced) {
		return
	}
	existing, err := c.lister.List(labels.Everything())
	if err != nil {
		c.log.Error("listing apiservices from the informer", "err", err)
		return
	}
	c.mu.Lock()
	for _, s := range existing {
		c.atStart[s.Name] = true
	}
	c.mu.Unlock()
	c.log.Debug("started", "existing", len(existing))
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for c.processNext(ctx) {
			}
		})
	}
	<-ctx.Done()
	c.queue.ShutDown()
	wg.Wait()
}

func (c *Controller) processNext(ctx context.Context) bool {
	name, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(name)
	if err := c.sync(ctx, name); err != nil {
		if ctx.Err() == nil {
			c.log.Warn("syncing an apiservice failed; retrying", "name", name, "err", err)
		}
		c.queue.AddRateLimited(name)
		return true
	}
	c.queue.Forget(name)
	return true
}

// sync brings the named APIService to what is desired, by kube's table (checkAPIService):
//
//	                                                | A. desired: not found | B. desired: sync on start | C. desired: sync always
//	------------------------------------------------|-----------------------|---------------------------|------------------------
//	1. current: lookup error                        | error                 | error                     | error
//	2. current: not found                           | -                     | create once               | create
//	3. current: no sync                             | -                     | -                         | -
//	4. current: sync on start, not present at start | -                     | -                         | -
//	5. current: sync on start, present at start     | delete once           | update once               | update once
//	6. current: sync always                         | delete                | update once               | update
func (c *Controller) sync(ctx context.Context, name string) (err error) {
	c.mu.RLock()
	desired, hasSynced, presentAtStart := c.desired[name], c.syncedOnce[name], c.atStart[name]
	c.mu.RUnlock()
	if !hasSynced {
		defer func() {
			if err == nil {
				c.mu.Lock()
				c.syncedOnce[name] = true
				c.mu.Unlock()
			}
		}()
	}
	curr, err := c.lister.Get(name)
	switch {
	case err != nil && !apierrors.IsNotFound(err): // 1
		return fmt.Errorf("reading apiservice %s from the informer: %w", name, err)
	case apierrors.IsNotFound(err) && desired == nil: // 2A
		return nil
	case managedOnStart(desired) && hasSynced: // 2B, 5B, 6B: once
		return nil
	case apierrors.IsNotFound(err): // 2B, 2C
		_, err := c.client.APIServices().Create(ctx, desired, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil // another server created it; the informer brings it
		}
		if err != nil {
			return fmt.Errorf("creating apiservice %s: %w", name, err)
		}
		c.log.Debug("created a local apiservice", "name", name)
		return nil
	case !managed(curr): // 3: the user's
		return nil
	case managedOnStart(curr) && !presentAtStart: // 4
		return nil
	case managedOnStart(curr) && hasSynced: // 5: once
		return nil
	case desired == nil: // 5A, 6A
		opts := metav1.DeleteOptions{Preconditions: metav1.NewUIDPreconditions(string(curr.UID))}
		err := c.client.APIServices().Delete(ctx, name, opts)
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return nil // deleted or replaced meanwhile; the informer brings the news
		}
		if err != nil {
			return fmt.Errorf("deleting apiservice %s: %w", name, err)
		}
		c.log.Debug("deleted a local apiservice that is no longer served", "name", name)
		return nil
	case reflect.DeepEqual(curr.Spec, desired.Spec):
		return nil
	}
	// 5B, 5C, 6B, 6C: only the spec is ours.
	updated := curr.DeepCopy()
	updated.Spec = desired.Spec
	_, err = c.client.APIServices().Update(ctx, updated, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("updating apiservice %s: %w", name, err)
	}
	return nil
}

func managedAs(s *apiregistrationv1.APIService) string {
	if s == nil {
		return ""
	}
	return s.Labels[ManagedLabel]
}

func managedOnStart(s *apiregistrationv1.APIService) bool { return managedAs(s) == ManageOnStart }

func managed(s *apiregistrationv1.APIService) bool {
	m := managedAs(s)
	return m == ManageOnStart || m == ManageContinuously
}
