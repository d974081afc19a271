//lint:file-ignore SA1019 core v1 Endpoints are deprecated in kube, which still serves them and keeps them with its controllers: so does apictl.

// Ported from k8s.io/kubernetes v1.37.2 pkg/controller/endpointslicemirroring/endpointslicemirroring_controller.go
// and utils.go, without metrics.

package endpoints

import (
	"context"
	"fmt"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	endpointsliceutil "k8s.io/endpointslice/util"
)

const (
	// MirroringControllerName is the mirroring controller's value of discovery's managed-by label.
	MirroringControllerName = "endpointslicemirroring-controller.k8s.io"
	// maxEndpointsPerSubset is kube-controller-manager's --mirroring-max-endpoints-per-subset default.
	maxEndpointsPerSubset = 1000
)

// MirroringController mirrors the Endpoints of every Service without a selector into
// EndpointSlices, for clients that read only slices; their ownerReferences name the Endpoints.
// Endpoints labelled endpointslice.kubernetes.io/skip-mirror=true (the kubernetes Service's) and
// leader election records are left alone.
type MirroringController struct {
	client    kubernetes.Interface
	endpoints cache.SharedIndexInformer
	slices    cache.SharedIndexInformer
	services  cache.SharedIndexInformer
	log       *slog.Logger
}

// NewMirroringController asks factory for the informers it needs; call it before the factory starts.
func NewMirroringController(client kubernetes.Interface, factory informers.SharedInformerFactory, log *slog.Logger) *MirroringController {
	return &MirroringController{
		client:    client,
		endpoints: factory.Core().V1().Endpoints().Informer(),
		slices:    factory.Discovery().V1().EndpointSlices().Informer(),
		services:  factory.Core().V1().Services().Informer(),
		log:       log,
	}
}

// Run syncs until ctx ends.
func (c *MirroringController) Run(ctx context.Context) {
	rec, stop := recorder(ctx, c.client, "endpoint-slice-mirroring-controller")
	defer stop()
	tracker := endpointsliceutil.NewEndpointSliceTracker()
	r := &mirroringRun{
		endpoints: corelisters.NewEndpointsLister(c.endpoints.GetIndexer()),
		slices:    discoverylisters.NewEndpointSliceLister(c.slices.GetIndexer()),
		services:  corelisters.NewServiceLister(c.services.GetIndexer()),
		tracker:   tracker,
		reconciler: &mirroringReconciler{client: c.client, tracker: tracker, events: rec, log: c.log,
			maxEndpointsPerSubset: maxEndpointsPerSubset},
	}
	runQueue(ctx, "endpoint_slice_mirroring", c.log, []handler{
		{c.endpoints, r.endpointsHandler},
		{c.slices, r.sliceHandler},
		{c.services, r.serviceHandler},
	}, r.sync, nil)
}

// mirroringRun is the state of one run.
type mirroringRun struct {
	endpoints  corelisters.EndpointsLister
	slices     discoverylisters.EndpointSliceLister
	services   corelisters.ServiceLister
	tracker    *endpointsliceutil.EndpointSliceTracker
	reconciler *mirroringReconciler
}

func (r *mirroringRun) sync(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	endpoints, err := r.endpoints.Endpoints(namespace).Get(name)
	switch {
	case apierrors.IsNotFound(err):
		return r.deleteMirroredSlices(ctx, namespace, name)
	case err != nil:
		return err
	case !shouldMirror(endpoints):
		return r.deleteMirroredSlices(ctx, namespace, name)
	}
	svc, err := r.services.Services(namespace).Get(name)
	switch {
	case apierrors.IsNotFound(err):
		return r.deleteMirroredSlices(ctx, namespace, name)
	case err != nil:
		return err
	case svc.Spec.Selector != nil:
		// The endpoints controller writes this Service's slices.
		return r.deleteMirroredSlices(ctx, namespace, name)
	}
	slices, err := mirroredSlices(r.slices, namespace, name)
	if err != nil {
		return err
	}
	if r.tracker.StaleSlices(svc, slices) {
		return errStale
	}
	return r.reconciler.reconcile(ctx, endpoints, slices)
}

func (r *mirroringRun) deleteMirroredSlices(ctx context.Context, namespace, name string) error {
	slices, err := mirroredSlices(r.slices, namespace, name)
	if err != nil {
		return err
	}
	r.tracker.DeleteService(namespace, name)
	return r.reconciler.deleteSlices(ctx, namespace, name, slices)
}

// mirroredSlices are the slices this controller wrote for the Endpoints namespace/name.
func mirroredSlices(lister discoverylisters.EndpointSliceLister, namespace, name string) ([]*discoveryv1.EndpointSlice, error) {
	selector := labels.Set{discoveryv1.LabelServiceName: name, discoveryv1.LabelManagedBy: MirroringControllerName}.AsSelectorPreValidated()
	return lister.EndpointSlices(namespace).List(selector)
}

// shouldMirror leaves out Endpoints that ask not to be mirrored and leader election records.
func shouldMirror(e *corev1.Endpoints) bool {
	if e == nil || e.Labels[discoveryv1.LabelSkipMirror] == "true" {
		return false
	}
	_, leaderElection := e.Annotations[resourcelock.LeaderElectionRecordAnnotationKey]
	return !leaderElection
}

func (r *mirroringRun) endpointsHandler(enqueue func(string)) cache.ResourceEventHandler {
	queue := enqueueObject(enqueue)
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if e, err := tombstone[*corev1.Endpoints](obj); err == nil && shouldMirror(e) {
				queue(obj)
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			prev, err1 := tombstone[*corev1.Endpoints](oldObj)
			cur, err2 := tombstone[*corev1.Endpoints](newObj)
			// Endpoints that stop being mirrored have slices to delete.
			if err1 == nil && err2 == nil && (shouldMirror(cur) || shouldMirror(prev)) {
				queue(newObj)
			}
		},
		DeleteFunc: func(obj any) {
			if e, err := tombstone[*corev1.Endpoints](obj); err == nil && shouldMirror(e) {
				queue(obj)
			}
		},
	}
}

func (r *mirroringRun) serviceHandler(enqueue func(string)) cache.ResourceEventHandler {
	queue := enqueueObject(enqueue)
	selectorless := func(obj any) bool {
		s, err := tombstone[*corev1.Service](obj)
		return err == nil && s.Spec.Selector == nil
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if selectorless(obj) {
				queue(obj)
			}
		},
		// Only gaining or losing a selector matters.
		UpdateFunc: func(oldObj, newObj any) {
			if selectorless(oldObj) != selectorless(newObj) {
				queue(newObj)
			}
		},
		DeleteFunc: func(obj any) {
			if selectorless(obj) {
				queue(obj)
			}
		},
	}
}

// sliceHandler queues the Endpoints of a mirrored slice that changed other than by this
// controller's own writes.
func (r *mirroringRun) sliceHandler(enqueue func(string)) cache.ResourceEventHandler {
	queueEndpoints := func(s *discoveryv1.EndpointSlice) {
		if name := s.Labels[discoveryv1.LabelServiceName]; name != "" {
			enqueue(fmt.Sprintf("%s/%s", s.Namespace, name))
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if s, err := tombstone[*discoveryv1.EndpointSlice](obj); err == nil && managedByMirroring(s) && r.tracker.ShouldSync(s) {
				queueEndpoints(s)
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			prev, err1 := tombstone[*discoveryv1.EndpointSlice](oldObj)
			cur, err2 := tombstone[*discoveryv1.EndpointSlice](newObj)
			if err1 != nil || err2 != nil {
				return
			}
			if cur.Labels[discoveryv1.LabelServiceName] != prev.Labels[discoveryv1.LabelServiceName] {
				queueEndpoints(cur)
				queueEndpoints(prev)
				return
			}
			if managedByMirroring(prev) != managedByMirroring(cur) || (managedByMirroring(cur) && r.tracker.ShouldSync(cur)) {
				queueEndpoints(cur)
			}
		},
		DeleteFunc: func(obj any) {
			s, err := tombstone[*discoveryv1.EndpointSlice](obj)
			if err == nil && managedByMirroring(s) && r.tracker.Has(s) && !r.tracker.HandleDeletion(s) {
				queueEndpoints(s)
			}
		},
	}
}

func managedByMirroring(s *discoveryv1.EndpointSlice) bool {
	return s.Labels[discoveryv1.LabelManagedBy] == MirroringControllerName
}
