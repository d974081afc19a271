package servicecidrs

// Ported from k8s.io/kubernetes v1.37.2 pkg/controller/servicecidrs/servicecidrs_controller.go, with
// pkg/util/servicecidr's ContainsPrefix and ContainsAddress.

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	metav1apply "k8s.io/client-go/applyconfigurations/meta/v1"
	networkingv1apply "k8s.io/client-go/applyconfigurations/networking/v1"
	"k8s.io/client-go/kubernetes"
	networkinglisters "k8s.io/client-go/listers/networking/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/apictl/apictl/pkg/kinds"
)

const (
	// ControllerName is kube-controller-manager's name of the controller.
	ControllerName = "service-cidr-controller"
	// Finalizer holds a deleted ServiceCIDR while IP addresses allocated from it have no other range.
	Finalizer = "networking.k8s.io/service-cidr-finalizer"
	// deletionGracePeriod lets every replica's allocator learn of a deletion before the object goes,
	// so that none allocates from it meanwhile.
	deletionGracePeriod = 10 * time.Second
	// Labels of the IPAddresses the service allocator makes (kube's networking/v1 constants).
	LabelIPFamily  = networkingv1.LabelIPAddressFamily
	LabelManagedBy = networkingv1.LabelManagedBy
	// ManagedBy is the value of LabelManagedBy on them: kube's ipallocator.ControllerName.
	ManagedBy = "ipallocator.k8s.io"
)

type controller struct {
	client  kubernetes.Interface
	cidrs   networkinglisters.ServiceCIDRLister
	ips     networkinglisters.IPAddressLister
	cidrInf cache.SharedIndexInformer
	ipInf   cache.SharedIndexInformer
	logger  *slog.Logger
}

func newController(c kinds.ControllerContext) (func(ctx context.Context), error) {
	cidrInf := c.Informers.Networking().V1().ServiceCIDRs()
	ipInf := c.Informers.Networking().V1().IPAddresses()
	ctrl := &controller{client: c.Client, cidrs: cidrInf.Lister(), ips: ipInf.Lister(),
		cidrInf: cidrInf.Informer(), ipInf: ipInf.Informer(), logger: c.Logger}
	return ctrl.run, nil
}

// run handles ServiceCIDRs until ctx ends, with a queue of this run's: a deleted ServiceCIDR is
// looked at again whenever an IPAddress or another ServiceCIDR goes away.
func (c *controller) run(ctx context.Context) {
	queue := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: ControllerName})
	defer queue.ShutDown()
	enqueue := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			queue.Add(key)
		}
	}
	// What frees a deleted ServiceCIDR: an IP address that goes, or another range that comes.
	enqueueDeleting := func(any) {
		all, _ := c.cidrs.List(labels.Everything())
		for _, cidr := range all {
			if !cidr.DeletionTimestamp.IsZero() {
				queue.Add(cidr.Name)
			}
		}
	}
	cidrReg, err := c.cidrInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { enqueue(obj); enqueueDeleting(obj) },
		UpdateFunc: func(_, obj any) { enqueue(obj) },
		DeleteFunc: func(obj any) { enqueueDeleting(obj) },
	})
	if err != nil {
		c.logger.Warn("watching ServiceCIDRs", "err", err)
		return
	}
	defer func() { _ = c.cidrInf.RemoveEventHandler(cidrReg) }()
	ipReg, err := c.ipInf.AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: enqueueDeleting})
	if err != nil {
		c.logger.Warn("watching IPAddresses", "err", err)
		return
	}
	defer func() { _ = c.ipInf.RemoveEventHandler(ipReg) }()
	if !cache.WaitForCacheSync(ctx.Done(), c.cidrInf.HasSynced, c.ipInf.HasSynced, cidrReg.HasSynced, ipReg.HasSynced) {
		return
	}
	go func() {
		<-ctx.Done()
		queue.ShutDown()
	}()
	for {
		key, quit := queue.Get()
		if quit {
			return
		}
		if err := c.sync(ctx, key, queue); err != nil {
			c.logger.Warn("syncing a ServiceCIDR", "serviceCIDR", key, "err", err)
			queue.AddRateLimited(key)
		} else {
			queue.Forget(key)
		}
		queue.Done(key)
	}
}

func (c *controller) sync(ctx context.Context, name string, queue workqueue.TypedRateLimitingInterface[string]) error {
	cidr, err := c.cidrs.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if !cidr.DeletionTimestamp.IsZero() {
		if !c.canDelete(cidr) {
			return c.setReady(ctx, cidr, metav1.ConditionFalse, networkingv1.ServiceCIDRReasonTerminating,
				"There are still IPAddresses referencing the ServiceCIDR, please remove them or create a new ServiceCIDR")
		}
		if left := deletionGracePeriod - time.Since(cidr.DeletionTimestamp.Time); left > 0 {
			queue.AddAfter(name, left)
			return nil
		}
		return c.patchFinalizer(ctx, cidr, false)
	}
	if err := c.patchFinalizer(ctx, cidr, true); err != nil {
		return err
	}
	return c.setReady(ctx, cidr, metav1.ConditionTrue, "", "Kubernetes Service CIDR is ready")
}

// canDelete is canDeleteCIDR: a ServiceCIDR whose every range lies in another one can go; else it
// can when none of the allocator's addresses is in it alone.
func (c *controller) canDelete(cidr *networkingv1.ServiceCIDR) bool {
	all, err := c.cidrs.List(labels.Everything())
	if err != nil {
		return false
	}
	hasParent := true
	for _, s := range cidr.Spec.CIDRs {
		if p, err := netip.ParsePrefix(s); err == nil {
			holders := containing(all, func(q netip.Prefix) bool { return q.Bits() <= p.Bits() && q.Contains(p.Addr()) })
			if len(holders) == 0 || len(holders) == 1 && holders[0] == cidr.Name {
				hasParent = false
			}
		}
	}
	if hasParent {
		return true
	}
	ips, err := c.ips.List(labels.SelectorFromSet(labels.Set{LabelManagedBy: ManagedBy}))
	if err != nil {
		return false
	}
	for _, ip := range ips {
		addr, err := netip.ParseAddr(ip.Name)
		if err != nil {
			continue
		}
		holders := containing(all, func(q netip.Prefix) bool { return q.Contains(addr) })
		if len(holders) == 1 && holders[0] == cidr.Name {
			return false
		}
	}
	return true
}

// containing names the ServiceCIDRs with a range that in says yes to.
func containing(all []*networkingv1.ServiceCIDR, in func(netip.Prefix) bool) []string {
	var names []string
	for _, c := range all {
		for _, s := range c.Spec.CIDRs {
			if p, err := netip.ParsePrefix(s); err == nil && in(p) {
				names = append(names, c.Name)
				break
			}
		}
	}
	return names
}

// patchFinalizer adds (add) or removes the finalizer with a strategic merge patch, as kube does.
func (c *controller) patchFinalizer(ctx context.Context, cidr *networkingv1.ServiceCIDR, add bool) error {
	if slices.Contains(cidr.Finalizers, Finalizer) == add {
		return nil
	}
	meta := map[string]any{"finalizers": []string{Finalizer}}
	if !add {
		meta = map[string]any{"$deleteFromPrimitiveList/finalizers": []string{Finalizer}}
	}
	patch, err := json.Marshal(map[string]any{"metadata": meta})
	if err != nil {
		return fmt.Errorf("encoding the finalizer patch: %w", err)
	}
	_, err = c.client.NetworkingV1().ServiceCIDRs().Patch(ctx, cidr.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("patching the finalizers of ServiceCIDR %s: %w", cidr.Name, err)
	}
	return nil
}

// setReady applies the Ready condition unless it already says the same.
func (c *controller) setReady(ctx context.Context, cidr *networkingv1.ServiceCIDR, status metav1.ConditionStatus, reason, message string) error {
	if cur := apimeta.FindStatusCondition(cidr.Status.Conditions, networkingv1.ServiceCIDRConditionReady); cur != nil &&
		cur.Status == status && cur.Reason == reason && cur.Message == message {
		return nil
	}
	apply := networkingv1apply.ServiceCIDR(cidr.Name).WithStatus(networkingv1apply.ServiceCIDRStatus().WithConditions(
		metav1apply.Condition().WithType(networkingv1.ServiceCIDRConditionReady).WithStatus(status).
			WithReason(reason).WithMessage(message).WithLastTransitionTime(metav1.Now())))
	_, err := c.client.NetworkingV1().ServiceCIDRs().ApplyStatus(ctx, apply, metav1.ApplyOptions{FieldManager: ControllerName, Force: true})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("setting the Ready condition of ServiceCIDR %s: %w", cidr.Name, err)
	}
	return nil
}
