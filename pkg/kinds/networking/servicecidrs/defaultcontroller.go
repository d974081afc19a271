package servicecidrs

// Ported from k8s.io/kubernetes v1.37.2
// pkg/controlplane/controller/defaultservicecidr/default_servicecidr_controller.go.

import (
	"context"
	"log/slog"
	"slices"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1apply "k8s.io/client-go/applyconfigurations/meta/v1"
	networkingv1apply "k8s.io/client-go/applyconfigurations/networking/v1"
	"k8s.io/client-go/kubernetes"
)

// DefaultName is the ServiceCIDR made from --service-cluster-ip-range.
const DefaultName = "kubernetes"

// defaultControllerName is kube-apiserver's field manager of the default ServiceCIDR's status.
const defaultControllerName = "kubernetes-service-cidr-controller"

// DefaultInterval is how often each replica checks the default ServiceCIDR, as kube-apiserver does.
const DefaultInterval = 10 * time.Second

// DefaultController keeps the default ServiceCIDR on one replica: it creates it when it is missing,
// makes a single-stack one dual-stack when the flag gained a second range, and sets its Ready
// condition when nobody has. Every replica runs one; they do not fight: a create that finds the
// object made is fine, and a replica whose flag differs from the object only says so.
type DefaultController struct {
	Client kubernetes.Interface
	// CIDRs are --service-cluster-ip-range's, the first the default family's.
	CIDRs  []string
	Logger *slog.Logger
	// Interval is DefaultInterval when 0.
	Interval time.Duration

	reportedMismatch, reportedNotReady bool
}

// Run checks at once, then every Interval, until ctx ends.
func (c *DefaultController) Run(ctx context.Context) {
	interval := c.Interval
	if interval <= 0 {
		interval = DefaultInterval
	}
	// Soon after the start the API may not answer yet: the first sync is retried quickly.
	retry := 100 * time.Millisecond
	for {
		wait := interval
		if err := c.sync(ctx); err != nil {
			c.Logger.Debug("syncing the default ServiceCIDR", "err", err)
			if retry < interval {
				wait, retry = retry, retry*2
			}
		} else {
			retry = interval
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

func (c *DefaultController) sync(ctx context.Context) error {
	cidrs := c.Client.NetworkingV1().ServiceCIDRs()
	current, err := cidrs.Get(ctx, DefaultName, metav1.GetOptions{})
	switch {
	case err == nil && len(c.CIDRs) == 2 && len(current.Spec.CIDRs) == 1 && c.CIDRs[0] == current.Spec.CIDRs[0]:
		c.Logger.Info("updating the default ServiceCIDR from single-stack to dual-stack", "from", current.Spec.CIDRs, "to", c.CIDRs)
		next := current.DeepCopy()
		next.Spec.CIDRs = c.CIDRs
		if _, err := cidrs.Update(ctx, next, metav1.UpdateOptions{}); err != nil {
			c.Logger.Error("the default ServiceCIDR cannot be made dual-stack", "from", current.Spec.CIDRs, "to", c.CIDRs, "err", err)
		}
		return nil
	case err == nil:
		return c.syncStatus(ctx, current)
	case !apierrors.IsNotFound(err):
		return err
	}
	c.Logger.Info("creating the default ServiceCIDR", "cidrs", c.CIDRs)
	current, err = cidrs.Create(ctx, &networkingv1.ServiceCIDR{
		ObjectMeta: metav1.ObjectMeta{Name: DefaultName},
		Spec:       networkingv1.ServiceCIDRSpec{CIDRs: c.CIDRs},
	}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil // another replica was quicker; its status is looked at next time
	}
	if err != nil {
		return err
	}
	return c.syncStatus(ctx, current)
}

// syncStatus sets Ready when the object matches the flag and has no Ready condition yet; one that
// is Ready=False (the service-cidr-controller's word) is reported once and left.
func (c *DefaultController) syncStatus(ctx context.Context, current *networkingv1.ServiceCIDR) error {
	if !current.DeletionTimestamp.IsZero() {
		return nil
	}
	if !slices.Equal(c.CIDRs, current.Spec.CIDRs) {
		if !c.reportedMismatch {
			c.Logger.Warn("the default ServiceCIDR does not match --service-cluster-ip-range", "serviceCIDR", current.Spec.CIDRs, "flag", c.CIDRs)
			c.reportedMismatch = true
		}
		return nil
	}
	ready := apimeta.FindStatusCondition(current.Status.Conditions, networkingv1.ServiceCIDRConditionReady)
	switch {
	case ready != nil && ready.Status == metav1.ConditionFalse:
		if !c.reportedNotReady {
			c.Logger.Warn("the default ServiceCIDR is not Ready though it matches --service-cluster-ip-range", "reason", ready.Reason, "message", ready.Message)
			c.reportedNotReady = true
		}
		return nil
	case ready != nil && ready.Status == metav1.ConditionTrue:
		return nil
	}
	apply := networkingv1apply.ServiceCIDR(DefaultName).WithStatus(networkingv1apply.ServiceCIDRStatus().WithConditions(
		metav1apply.Condition().
			WithType(networkingv1.ServiceCIDRConditionReady).
			WithStatus(metav1.ConditionTrue).
			WithMessage("Kubernetes default Service CIDR is ready").
			WithLastTransitionTime(metav1.Now())))
	_, err := c.Client.NetworkingV1().ServiceCIDRs().ApplyStatus(ctx, apply, metav1.ApplyOptions{FieldManager: defaultControllerName, Force: true})
	return err
}
