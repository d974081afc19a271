// Follows k8s.io/kubernetes v1.37.2 pkg/controller/endpointslice/endpointslice_controller.go, without
// pods, nodes and topology; the reconciler is kube's own, from k8s.io/endpointslice.

package endpoints

import (
	"context"
	"log/slog"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/endpointslice"
	endpointsliceutil "k8s.io/endpointslice/util"
)

const (
	// SliceControllerName is the EndpointSlice controller's value of discovery's managed-by label.
	SliceControllerName = "endpointslice-controller.k8s.io"
	// maxEndpointsPerSlice is kube-controller-manager's --max-endpoints-per-slice default.
	maxEndpointsPerSlice = 100
)

// SliceController writes, for every Service with a selector, the EndpointSlices of the pods it
// selects: none, so one placeholder slice without endpoints, as kube writes it. A deleted Service's
// slices go with it through their ownerReferences (the garbage collector).
type SliceController struct {
	client   kubernetes.Interface
	services cache.SharedIndexInformer
	slices   cache.SharedIndexInformer
	log      *slog.Logger
}

// NewSliceController asks factory for the informers it needs; call it before the factory starts.
func NewSliceController(client kubernetes.Interface, factory informers.SharedInformerFactory, log *slog.Logger) *SliceController {
	return &SliceController{
		client:   client,
		services: factory.Core().V1().Services().Informer(),
		slices:   factory.Discovery().V1().EndpointSlices().Informer(),
		log:      log,
	}
}

// Run syncs until ctx ends.
func (c *SliceController) Run(ctx context.Context) {
	rec, stop := recorder(ctx, c.client, "endpoint-slice-controller")
	defer stop()
	tracker := endpointsliceutil.NewEndpointSliceTracker()
	// No nodes are served: the reconciler looks nodes up only for pods.
	nodes := corelisters.NewNodeLister(cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{}))
	r := &sliceRun{
		services:     corelisters.NewServiceLister(c.services.GetIndexer()),
		slices:       discoverylisters.NewEndpointSliceLister(c.slices.GetIndexer()),
		tracker:      tracker,
		triggerTimes: endpointsliceutil.NewTriggerTimeTracker(),
		reconciler:   endpointslice.NewReconciler(c.client, nodes, maxEndpointsPerSlice, tracker, nil, rec, SliceControllerName),
		events:       rec,
		log:          logr.FromSlogHandler(c.log.Handler()),
	}
	runQueue(ctx, "endpoint_slice", c.log, []handler{
		{c.services, func(enqueue func(string)) cache.ResourceEventHandler {
			return cache.ResourceEventHandlerFuncs{AddFunc: enqueueObject(enqueue),
				UpdateFunc: func(_, cur any) { enqueueObject(enqueue)(cur) }, DeleteFunc: enqueueObject(enqueue)}
		}},
		{c.slices, r.sliceHandler},
	}, r.sync, nil)
}

// sliceRun is the state of one run.
type sliceRun struct {
	services     corelisters.ServiceLister
	slices       discoverylisters.EndpointSliceLister
	tracker      *endpointsliceutil.EndpointSliceTracker
	triggerTimes *endpointsliceutil.TriggerTimeTracker
	reconciler   *endpointslice.Reconciler
	events       record.EventRecorder
	log          logr.Logger
}

// sliceHandler queues a Service when one of its slices changed other than by this controller's
// own writes (which the tracker expects).
func (r *sliceRun) sliceHandler(enqueue func(string)) cache.ResourceEventHandler {
	queueService := func(s *discoveryv1.EndpointSlice) {
		if key, err := endpointslice.ServiceControllerKey(s); err == nil {
			enqueue(key)
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if s, err := tombstone[*discoveryv1.EndpointSlice](obj); err == nil && r.reconciler.ManagedByController(s) && r.tracker.ShouldSync(s) {
				queueService(s)
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			prev, err1 := tombstone[*discoveryv1.EndpointSlice](oldObj)
			cur, err2 := tombstone[*discoveryv1.EndpointSlice](newObj)
			if err1 != nil || err2 != nil {
				return
			}
			// A slice moved to another Service is both Services' business.
			if cur.Labels[discoveryv1.LabelServiceName] != prev.Labels[discoveryv1.LabelServiceName] {
				queueService(prev)
				queueService(cur)
				return
			}
			if r.reconciler.ManagedByChanged(prev, cur) || (r.reconciler.ManagedByController(cur) && r.tracker.ShouldSync(cur)) {
				queueService(cur)
			}
		},
		DeleteFunc: func(obj any) {
			s, err := tombstone[*discoveryv1.EndpointSlice](obj)
			if err == nil && r.reconciler.ManagedByController(s) && r.tracker.Has(s) && !r.tracker.HandleDeletion(s) {
				queueService(s)
			}
		},
	}
}

func (r *sliceRun) sync(_ context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	service, err := r.services.Services(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		r.triggerTimes.DeleteService(namespace, name)
		r.reconciler.DeleteService(namespace, name)
		r.tracker.DeleteService(namespace, name)
		return nil
	}
	if err != nil {
		return err
	}
	if service.Spec.Type == corev1.ServiceTypeExternalName || service.Spec.Selector == nil {
		return nil
	}
	selector := labels.Set{discoveryv1.LabelServiceName: service.Name, discoveryv1.LabelManagedBy: SliceControllerName}.AsSelectorPreValidated()
	all, err := r.slices.EndpointSlices(namespace).List(selector)
	if err != nil {
		return err
	}
	// Slices being deleted would hold the controller up.
	var existing []*discoveryv1.EndpointSlice
	for _, s := range all {
		if s.DeletionTimestamp == nil {
			existing = append(existing, s)
		}
	}
	if r.tracker.StaleSlices(service, existing) {
		return errStale
	}
	triggerTime := r.triggerTimes.ComputeEndpointLastChangeTriggerTime(namespace, service, nil)
	if err := r.reconciler.Reconcile(r.log, service, nil, existing, triggerTime); err != nil {
		r.events.Eventf(service, corev1.EventTypeWarning, "FailedToUpdateEndpointSlices",
			"Error updating Endpoint Slices for Service %s/%s: %v", service.Namespace, service.Name, err)
		return err
	}
	return nil
}
