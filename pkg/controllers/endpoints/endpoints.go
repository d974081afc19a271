//lint:file-ignore SA1019 core v1 Endpoints are deprecated in kube, which still serves them and keeps them with its controllers: so does apictl.

// Ported from k8s.io/kubernetes v1.37.2 pkg/controller/endpoint/endpoints_controller.go, without
// pods: apictl serves none, so a Service's selector matches nothing.

package endpoints

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/tools/record"
	endpointsliceutil "k8s.io/endpointslice/util"
)

const (
	// EndpointsControllerName is the endpoints controller's value of LabelManagedBy.
	EndpointsControllerName = "endpoint-controller"
	// LabelManagedBy marks the Endpoints the endpoints controller writes.
	LabelManagedBy = "endpoints.kubernetes.io/managed-by"
	// maxCapacity is the most addresses an Endpoints holds before kube truncates it.
	maxCapacity = 1000
)

// EndpointsController writes, for every Service with a selector, the Endpoints of the pods it
// selects (none), and deletes the Endpoints of a Service that is gone.
type EndpointsController struct {
	client    kubernetes.Interface
	services  cache.SharedIndexInformer
	endpoints cache.SharedIndexInformer
	log       *slog.Logger
}

// NewEndpointsController asks factory for the informers it needs; call it before the factory starts.
func NewEndpointsController(client kubernetes.Interface, factory informers.SharedInformerFactory, log *slog.Logger) *EndpointsController {
	return &EndpointsController{
		client:    client,
		services:  factory.Core().V1().Services().Informer(),
		endpoints: factory.Core().V1().Endpoints().Informer(),
		log:       log,
	}
}

// Run syncs until ctx ends.
func (c *EndpointsController) Run(ctx context.Context) {
	rec, stop := recorder(ctx, c.client, EndpointsControllerName)
	defer stop()
	r := &endpointsRun{
		client:       c.client,
		services:     corelisters.NewServiceLister(c.services.GetIndexer()),
		endpoints:    corelisters.NewEndpointsLister(c.endpoints.GetIndexer()),
		triggerTimes: endpointsliceutil.NewTriggerTimeTracker(),
		stale:        map[string]string{},
		events:       rec,
	}
	runQueue(ctx, "endpoint", c.log, []handler{
		{c.services, func(enqueue func(string)) cache.ResourceEventHandler {
			return cache.ResourceEventHandlerFuncs{AddFunc: enqueueObject(enqueue),
				UpdateFunc: func(_, cur any) { enqueueObject(enqueue)(cur) }, DeleteFunc: enqueueObject(enqueue)}
		}},
		{c.endpoints, func(enqueue func(string)) cache.ResourceEventHandler {
			return cache.ResourceEventHandlerFuncs{DeleteFunc: enqueueObject(enqueue)}
		}},
	}, r.sync, r.checkLeftoverEndpoints)
}

// endpointsRun is the state of one run.
type endpointsRun struct {
	client       kubernetes.Interface
	services     corelisters.ServiceLister
	endpoints    corelisters.EndpointsLister
	triggerTimes *endpointsliceutil.TriggerTimeTracker
	events       record.EventRecorder
	// stale holds, by key, the resourceVersion of Endpoints this run replaced: the informer has not
	// caught up while it still shows it (kube's staleEndpointsTracker).
	mu    sync.Mutex
	stale map[string]string
}

// checkLeftoverEndpoints queues every Endpoints, so that those whose Service went while no
// replica ran the controller are deleted.
func (r *endpointsRun) checkLeftoverEndpoints(enqueue func(string)) {
	list, err := r.endpoints.List(labels.Everything())
	if err != nil {
		return
	}
	for _, ep := range list {
		// Leader election records of old components, not a Service's endpoints.
		if _, ok := ep.Annotations[resourcelock.LeaderElectionRecordAnnotationKey]; ok {
			continue
		}
		enqueue(keyOf(ep))
	}
}

func (r *endpointsRun) sync(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	service, err := r.services.Services(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		// The Service is gone: so are its Endpoints.
		err = r.client.CoreV1().Endpoints(namespace).Delete(ctx, name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting the Endpoints %s of a deleted Service: %w", key, err)
		}
		r.triggerTimes.DeleteService(namespace, name)
		r.mu.Lock()
		delete(r.stale, key)
		r.mu.Unlock()
		return nil
	}
	if err != nil {
		return err
	}
	// An ExternalName Service has no endpoints, and one without a selector has those its owner
	// writes.
	if service.Spec.Type == corev1.ServiceTypeExternalName || service.Spec.Selector == nil {
		return nil
	}
	// No pod matches: the subsets are empty.
	subsets := []corev1.EndpointSubset{}
	triggerTime := r.triggerTimes.ComputeEndpointLastChangeTriggerTime(namespace, service, nil)

	current, err := r.endpoints.Endpoints(namespace).Get(name)
	switch {
	case apierrors.IsNotFound(err):
		current = &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: service.Labels}}
	case err != nil:
		return err
	default:
		r.mu.Lock()
		staleRV, isStale := r.stale[key]
		r.mu.Unlock()
		if isStale && staleRV == current.ResourceVersion {
			return fmt.Errorf("endpoints %s at resourceVersion %s, already replaced: %w", key, current.ResourceVersion, errStale)
		}
	}
	create := current.ResourceVersion == ""
	if !create && (equality.Semantic.DeepEqual(current.Subsets, subsets) || equality.Semantic.DeepEqual(RepackSubsets(current.Subsets), subsets)) &&
		labelsCorrect(current.Labels, service.Labels) && capacityAnnotationCorrect(current.Annotations, current.Subsets) {
		return nil
	}
	next := current.DeepCopy()
	next.Subsets = subsets
	next.Labels = maps.Clone(service.Labels)
	if next.Labels == nil {
		next.Labels = map[string]string{}
	}
	if next.Annotations == nil {
		next.Annotations = map[string]string{}
	}
	if !triggerTime.IsZero() {
		next.Annotations[corev1.EndpointsLastChangeTriggerTime] = triggerTime.UTC().Format(time.RFC3339Nano)
	} else {
		// No new trigger time: the annotation goes.
		delete(next.Annotations, corev1.EndpointsLastChangeTriggerTime)
	}
	// Never over capacity without pods.
	delete(next.Annotations, corev1.EndpointsOverCapacity)
	if service.Spec.ClusterIP == corev1.ClusterIPNone || service.Spec.ClusterIP == "" {
		next.Labels[corev1.IsHeadlessService] = ""
	} else {
		delete(next.Labels, corev1.IsHeadlessService)
	}
	next.Labels[LabelManagedBy] = EndpointsControllerName

	var updated *corev1.Endpoints
	if create {
		_, err = r.client.CoreV1().Endpoints(namespace).Create(ctx, next, metav1.CreateOptions{})
	} else {
		updated, err = r.client.CoreV1().Endpoints(namespace).Update(ctx, next, metav1.UpdateOptions{})
	}
	if err != nil {
		// A namespace being deleted refuses new objects; its Services go with it.
		if create && apierrors.IsForbidden(err) && apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			return nil
		}
		if create {
			r.events.Eventf(next, corev1.EventTypeWarning, "FailedToCreateEndpoint", "Failed to create endpoint for service %v/%v: %v", namespace, name, err)
		} else {
			r.events.Eventf(next, corev1.EventTypeWarning, "FailedToUpdateEndpoint", "Failed to update endpoint %v/%v: %v", namespace, name, err)
		}
		return err
	}
	if updated != nil && updated.ResourceVersion != current.ResourceVersion {
		r.mu.Lock()
		r.stale[key] = current.ResourceVersion
		r.mu.Unlock()
	}
	return nil
}

// labelsCorrect says the Endpoints carry the Service's labels and the managed-by label, and no
// others but the headless one.
func labelsCorrect(epLabels, svcLabels map[string]string) bool {
	if epLabels[LabelManagedBy] != EndpointsControllerName {
		return false
	}
	skipped := 0
	for k, v := range epLabels {
		if k == corev1.IsHeadlessService || k == LabelManagedBy {
			skipped++
		} else if sv, ok := svcLabels[k]; !ok || sv != v {
			return false
		}
	}
	return len(svcLabels) == len(epLabels)-skipped
}

// capacityAnnotationCorrect says the over-capacity annotation is absent, as it must be at or
// under maxCapacity addresses.
func capacityAnnotationCorrect(annotations map[string]string, subsets []corev1.EndpointSubset) bool {
	n := 0
	for _, s := range subsets {
		n += len(s.Addresses) + len(s.NotReadyAddresses)
	}
	if n > maxCapacity {
		return false
	}
	_, ok := annotations[corev1.EndpointsOverCapacity]
	return !ok
}
