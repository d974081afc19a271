// Package apiserviceavailable sets the Available condition of APIServices, as kube-aggregator's
// local and remote availability controllers do: a Local APIService is always available; a remote
// one is available when its Service exists, listens on the port (ClusterIP services), has a ready
// endpoint for it, and the backend answers its discovery document. It follows APIServices, Services
// and EndpointSlices through informers and re-checks remote APIServices every 30 s, as kube does,
// because a backend can stop answering without any object changing.
package apiserviceavailable

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	corev1informers "k8s.io/client-go/informers/core/v1"
	discoveryv1informers "k8s.io/client-go/informers/discovery/v1"
	corev1listers "k8s.io/client-go/listers/core/v1"
	discoveryv1listers "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"k8s.io/kube-aggregator/pkg/apis/apiregistration/v1/helper"
	apiregistrationclient "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset/typed/apiregistration/v1"
	apiregistrationinformers "k8s.io/kube-aggregator/pkg/client/informers/externalversions/apiregistration/v1"
	apiregistrationlisters "k8s.io/kube-aggregator/pkg/client/listers/apiregistration/v1"

	"github.com/apictl/apictl/pkg/controllers/synced"
)

// Recheck is how often kube looks at every APIService again (its informer resync).
const Recheck = 30 * time.Second

// Scope is which APIServices a controller looks after.
type Scope int

const (
	// All is local and remote APIServices.
	All Scope = iota
	// LocalOnly is the APIServices served by the server itself (no spec.service): always available.
	// kube runs this controller in every kube-apiserver.
	LocalOnly
	// RemoteOnly is the APIServices backed by a service, whose checks reach the network: the one
	// controller whose writes depend on the replica that runs it, so it runs once per cluster.
	RemoteOnly
)

func (s Scope) covers(a *apiregistrationv1.APIService) bool {
	switch s {
	case LocalOnly:
		return a.Spec.Service == nil
	case RemoteOnly:
		return a.Spec.Service != nil
	}
	return true
}

// Config is what the controller needs.
type Config struct {
	APIServices    apiregistrationinformers.APIServiceInformer
	Services       corev1informers.ServiceInformer
	EndpointSlices discoveryv1informers.EndpointSliceInformer
	// Client writes the status subresource.
	Client apiregistrationclient.APIServicesGetter
	// Resolver finds a backend for the discovery check; nil skips the check, as kube does without
	// a resolver.
	Resolver ServiceResolver
	// ProxyClientCert returns the front-proxy client certificate and key (PEM) the aggregator
	// presents to backends; nil presents none.
	ProxyClientCert func() (cert, key []byte)
	Logger          *slog.Logger
	// Recheck overrides Recheck (tests).
	Recheck time.Duration
	// Only limits the controller to local or remote APIServices; the zero value is All.
	Only Scope
}

// Controller keeps the Available condition current.
type Controller struct {
	cfg        Config
	apiService apiregistrationlisters.APIServiceLister
	services   corev1listers.ServiceLister
	slices     discoveryv1listers.EndpointSliceLister
	synced     []cache.InformerSynced
	// handlers are the event handlers New added, removed when Run returns.
	handlers []handlerRegistration
	log      *slog.Logger
	queue    workqueue.TypedRateLimitingInterface[string]
}

type handlerRegistration struct {
	informer cache.SharedIndexInformer
	reg      cache.ResourceEventHandlerRegistration
}

// New returns the controller and adds its handlers to the informers. A Controller runs once: Run
// removes the handlers when it returns, and a later run needs a new Controller from New.
func New(cfg Config) (*Controller, error) {
	if cfg.Recheck <= 0 {
		cfg.Recheck = Recheck
	}
	c := &Controller{
		cfg:        cfg,
		apiService: cfg.APIServices.Lister(),
		services:   cfg.Services.Lister(),
		slices:     cfg.EndpointSlices.Lister(),
		log:        cfg.Logger.With("component", "apiservice-availability"),
		// kube's tight requeue: availability depends on the network too, which no watch reports.
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](5*time.Millisecond, 30*time.Second),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "AvailableConditionController"}),
	}
	handlers := []struct {
		informer cache.SharedIndexInformer
		enqueue  func(any)
	}{
		{cfg.APIServices.Informer(), c.enqueueAPIService},
	}
	if cfg.Only != LocalOnly {
		// Services and endpoints matter to remote APIServices alone.
		handlers = append(handlers, []struct {
			informer cache.SharedIndexInformer
			enqueue  func(any)
		}{{cfg.Services.Informer(), c.enqueueService}, {cfg.EndpointSlices.Informer(), c.enqueueEndpointSlice}}...)
	}
	for _, h := range handlers {
		reg, err := h.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    h.enqueue,
			UpdateFunc: func(_, obj any) { h.enqueue(obj) },
			DeleteFunc: h.enqueue,
		})
		if err != nil {
			c.removeHandlers()
			return nil, fmt.Errorf("adding the availability handlers: %w", err)
		}
		c.handlers = append(c.handlers, handlerRegistration{h.informer, reg})
		c.synced = append(c.synced, reg.HasSynced)
	}
	return c, nil
}

// removeHandlers takes the controller's handlers off the shared informers, which outlive it.
func (c *Controller) removeHandlers() {
	for _, h := range c.handlers {
		_ = h.informer.RemoveEventHandler(h.reg)
	}
	c.handlers = nil
}

func unwrap(obj any) any {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return tombstone.Obj
	}
	return obj
}

func (c *Controller) enqueueAPIService(obj any) {
	if s, ok := unwrap(obj).(*apiregistrationv1.APIService); ok && c.cfg.Only.covers(s) {
		c.queue.Add(s.Name)
	}
}

func (c *Controller) enqueueService(obj any) {
	if s, ok := unwrap(obj).(*corev1.Service); ok {
		c.enqueueFor(s.Namespace, s.Name)
	}
}

func (c *Controller) enqueueEndpointSlice(obj any) {
	if s, ok := unwrap(obj).(*discoveryv1.EndpointSlice); ok && s.Labels[discoveryv1.LabelServiceName] != "" {
		c.enqueueFor(s.Namespace, s.Labels[discoveryv1.LabelServiceName])
	}
}

// enqueueFor queues the APIServices backed by the service. APIServices are few: a scan is cheaper
// than an index to keep.
func (c *Controller) enqueueFor(namespace, name string) {
	all, err := c.apiService.List(labels.Everything())
	if err != nil {
		return
	}
	for _, s := range all {
		if ref := s.Spec.Service; ref != nil && ref.Namespace == namespace && ref.Name == name {
			c.queue.Add(s.Name)
		}
	}
}

// Run waits for the informers and syncs with workers until ctx ends; it returns when they have
// stopped, with the controller's handlers removed from the informers.
func (c *Controller) Run(ctx context.Context, workers int) {
	defer c.removeHandlers()
	defer c.queue.ShutDown()
	if !synced.Wait(ctx, c.synced...) {
		return
	}
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
	remote, err := c.sync(ctx, name)
	switch {
	case err != nil:
		if ctx.Err() == nil {
			c.log.Debug("apiservice availability: retrying", "name", name, "err", err)
		}
		c.queue.AddRateLimited(name)
	default:
		c.queue.Forget(name)
	}
	if remote {
		c.queue.AddAfter(name, c.cfg.Recheck)
	}
	return true
}

// sync sets the named APIService's condition; remote says it is a remote one (to be re-checked).
// An error asks for a retry: a failed write, or a failed discovery check (as kube, which retries
// those soon as well as at the re-check).
func (c *Controller) sync(ctx context.Context, name string) (remote bool, _ error) {
	original, err := c.apiService.Get(name)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading apiservice %s from the informer: %w", name, err)
	}
	if !c.cfg.Only.covers(original) {
		return false, nil // the other scope's controller looks after it
	}
	s := original.DeepCopy()
	if s.Spec.Service == nil {
		helper.SetAPIServiceCondition(s, helper.NewLocalAvailableAPIServiceCondition())
		return false, c.updateStatus(ctx, original, s)
	}
	cond, checkErr := c.remoteCondition(ctx, s)
	helper.SetAPIServiceCondition(s, cond)
	if err := c.updateStatus(ctx, original, s); err != nil {
		return true, err
	}
	return true, checkErr
}

// remoteCondition runs kube's checks in kube's order, with its reasons and messages. The error is
// the failed discovery check's, for a retry.
func (c *Controller) remoteCondition(ctx context.Context, s *apiregistrationv1.APIService) (apiregistrationv1.APIServiceCondition, error) {
	ref := s.Spec.Service
	cond := apiregistrationv1.APIServiceCondition{Type: apiregistrationv1.Available, Status: apiregistrationv1.ConditionTrue,
		LastTransitionTime: metav1.Now()}
	set := func(status apiregistrationv1.ConditionStatus, reason, format string, args ...any) apiregistrationv1.APIServiceCondition {
		cond.Status, cond.Reason, cond.Message = status, reason, fmt.Sprintf(format, args...)
		return cond
	}
	svc, err := c.services.Services(ref.Namespace).Get(ref.Name)
	if apierrors.IsNotFound(err) {
		return set(apiregistrationv1.ConditionFalse, "ServiceNotFound", "service/%s in %q is not present", ref.Name, ref.Namespace), nil
	} else if err != nil {
		return set(apiregistrationv1.ConditionUnknown, "ServiceAccessError", "service/%s in %q cannot be checked due to: %v", ref.Name, ref.Namespace, err), nil
	}
	if svc.Spec.Type == corev1.ServiceTypeClusterIP {
		// A cluster IP service must listen on the port and have a ready endpoint for it.
		i := slices.IndexFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return p.Port == port(s) })
		if i < 0 {
			return set(apiregistrationv1.ConditionFalse, "ServicePortError", "service/%s in %q is not listening on port %d", ref.Name, ref.Namespace, port(s)), nil
		}
		portName := svc.Spec.Ports[i].Name
		eps, err := c.slices.EndpointSlices(ref.Namespace).List(labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: ref.Name}))
		switch {
		case err != nil:
			return set(apiregistrationv1.ConditionUnknown, "EndpointsAccessError", "service/%s in %q cannot be checked due to: %v", ref.Name, ref.Namespace, err), nil
		case len(eps) == 0:
			return set(apiregistrationv1.ConditionFalse, "EndpointsNotFound", "cannot find endpointslices for service/%s in %q", ref.Name, ref.Namespace), nil
		case !hasAvailableEndpoint(portName, eps):
			return set(apiregistrationv1.ConditionFalse, "MissingEndpoints", "endpointslices for service/%s in %q have no addresses with port name %q", ref.Name, ref.Namespace, portName), nil
		}
	}
	if c.cfg.Resolver != nil {
		if err := c.checkDiscovery(ctx, s); err != nil {
			return set(apiregistrationv1.ConditionFalse, "FailedDiscoveryCheck", "%s", err.Error()), err
		}
	}
	return set(apiregistrationv1.ConditionTrue, "Passed", "all checks passed"), nil
}

// hasAvailableEndpoint is kube's: a slice with a ready (or unknown) endpoint and a port of the name.
func hasAvailableEndpoint(portName string, eps []*discoveryv1.EndpointSlice) bool {
	return slices.ContainsFunc(eps, func(s *discoveryv1.EndpointSlice) bool {
		if !slices.ContainsFunc(s.Endpoints, func(e discoveryv1.Endpoint) bool {
			return e.Conditions.Ready == nil || *e.Conditions.Ready
		}) {
			return false
		}
		return slices.ContainsFunc(s.Ports, func(p discoveryv1.EndpointPort) bool {
			return p.Name != nil && *p.Name == portName && p.Port != nil
		})
	})
}

// updateStatus writes the status subresource when the status changed: the re-checks would
// otherwise write every 30 s.
func (c *Controller) updateStatus(ctx context.Context, original, updated *apiregistrationv1.APIService) error {
	if equality.Semantic.DeepEqual(original.Status, updated.Status) {
		return nil
	}
	before := helper.GetAPIServiceConditionByType(original, apiregistrationv1.Available)
	after := helper.GetAPIServiceConditionByType(updated, apiregistrationv1.Available)
	if before == nil || after == nil || before.Status != after.Status {
		c.log.Info("changing APIService availability", "name", updated.Name, "status", after.Status, "reason", after.Reason, "message", after.Message)
	}
	if _, err := c.cfg.Client.APIServices().UpdateStatus(ctx, updated, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("updating the status of apiservice %s: %w", updated.Name, err)
	}
	return nil
}
