package allocator

import (
	"context"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"
)

// txn records the reservations one write created, to undo them if the write fails.
type txn struct {
	created []string
}

// allocate gives svc what its type needs and old (nil on create) did not already hold: IP families and
// their policy, cluster IPs, node ports and a health check node port, as kube's allocateCreate and
// allocateUpdate do. Reservations it creates are added to t. Errors are kube's Status errors.
func (a *Allocator) allocate(ctx context.Context, svc, old *corev1.Service, t *txn) error {
	if err := a.initIPFamilies(svc, old); err != nil {
		return err
	}
	o := ownerOf(svc, a.now())
	if err := a.allocClusterIPs(ctx, svc, old, o, t); err != nil {
		return err
	}
	return a.allocNodePorts(ctx, svc, old, o, t)
}

func invalid(svc *corev1.Service, errs ...*field.Error) error {
	return apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("Service").GroupKind(), svc.Name, errs)
}

func policyOf(s *corev1.Service) corev1.IPFamilyPolicy {
	if s.Spec.IPFamilyPolicy == nil {
		return ""
	}
	return *s.Spec.IPFamilyPolicy
}

func familyOf(ip string) corev1.IPFamily {
	switch {
	case netutils.IsIPv4String(ip):
		return corev1.IPv4Protocol
	case netutils.IsIPv6String(ip):
		return corev1.IPv6Protocol
	}
	return "unknown"
}

// initIPFamilies is kube's initIPFamilyFields: the policy defaults to SingleStack (RequireDualStack
// for a headless service without selector, the old policy on update), the families follow the
// cluster IPs and the cluster's ranges. Validation already ran, so the inputs are well-formed.
func (a *Allocator) initIPFamilies(svc, old *corev1.Service) error {
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	if old != nil && svc.Spec.IPFamilyPolicy != nil && old.Spec.Type == svc.Spec.Type &&
		policyOf(svc) == corev1.IPFamilyPolicyPreferDualStack && policyOf(old) == corev1.IPFamilyPolicyPreferDualStack &&
		slices.Equal(old.Spec.ClusterIPs, svc.Spec.ClusterIPs) && slices.Equal(old.Spec.IPFamilies, svc.Spec.IPFamilies) {
		return nil // a PreferDualStack service is not upgraded or downgraded behind its back
	}
	headlessNoSelector := svc.Spec.ClusterIP == corev1.ClusterIPNone && len(svc.Spec.Selector) == 0
	if svc.Spec.IPFamilyPolicy == nil {
		p := corev1.IPFamilyPolicySingleStack
		switch {
		case old != nil && old.Spec.IPFamilyPolicy != nil:
			p = *old.Spec.IPFamilyPolicy
		case headlessNoSelector:
			p = corev1.IPFamilyPolicyRequireDualStack
		}
		svc.Spec.IPFamilyPolicy = &p
	}
	policy := field.NewPath("spec", "ipFamilyPolicy")
	var errs []*field.Error
	if old != nil {
		if policyOf(svc) == corev1.IPFamilyPolicySingleStack {
			if slices.Equal(old.Spec.ClusterIPs, svc.Spec.ClusterIPs) && len(svc.Spec.ClusterIPs) > 1 {
				svc.Spec.ClusterIPs = svc.Spec.ClusterIPs[:1]
			}
			if slices.Equal(old.Spec.IPFamilies, svc.Spec.IPFamilies) && len(svc.Spec.IPFamilies) > 1 {
				svc.Spec.IPFamilies = svc.Spec.IPFamilies[:1]
			}
		} else {
			if len(svc.Spec.ClusterIPs) > 0 && len(svc.Spec.ClusterIPs) < len(old.Spec.ClusterIPs) {
				errs = append(errs, field.Invalid(policy, svc.Spec.IPFamilyPolicy, "must be 'SingleStack' to release the secondary cluster IP"))
			}
			if len(svc.Spec.IPFamilies) > 0 && len(svc.Spec.IPFamilies) < len(old.Spec.IPFamilies) {
				errs = append(errs, field.Invalid(policy, svc.Spec.IPFamilyPolicy, "must be 'SingleStack' to release the secondary IP family"))
			}
		}
	}
	if policyOf(svc) == corev1.IPFamilyPolicySingleStack {
		if len(svc.Spec.ClusterIPs) == 2 {
			errs = append(errs, field.Invalid(policy, svc.Spec.IPFamilyPolicy, "must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified"))
		}
		if len(svc.Spec.IPFamilies) == 2 {
			errs = append(errs, field.Invalid(policy, svc.Spec.IPFamilyPolicy, "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified"))
		}
	}
	for i, ip := range svc.Spec.ClusterIPs {
		if ip == corev1.ClusterIPNone {
			break
		}
		if i < len(svc.Spec.IPFamilies) {
			continue
		}
		fam := familyOf(ip)
		if _, ok := a.ranges[fam]; !ok {
			errs = append(errs, field.Invalid(field.NewPath("spec", "clusterIPs").Index(i), svc.Spec.ClusterIPs,
				fmt.Sprintf("%s is not configured on this cluster", fam)))
		} else {
			svc.Spec.IPFamilies = append(svc.Spec.IPFamilies, fam)
		}
	}
	if len(errs) > 0 {
		return invalid(svc, errs...)
	}
	if headlessNoSelector {
		if len(svc.Spec.IPFamilies) == 0 {
			svc.Spec.IPFamilies = []corev1.IPFamily{a.primary}
		}
		if len(svc.Spec.IPFamilies) < 2 && policyOf(svc) != corev1.IPFamilyPolicySingleStack {
			svc.Spec.IPFamilies = append(svc.Spec.IPFamilies, otherFamily(svc.Spec.IPFamilies[0]))
		}
		return nil
	}
	if policyOf(svc) == corev1.IPFamilyPolicyRequireDualStack && len(a.ranges) < 2 {
		errs = append(errs, field.Invalid(policy, svc.Spec.IPFamilyPolicy, "this cluster is not configured for dual-stack services"))
	}
	for i, fam := range svc.Spec.IPFamilies {
		if _, ok := a.ranges[fam]; !ok {
			errs = append(errs, field.Invalid(field.NewPath("spec", "ipFamilies").Index(i), fam, "not configured on this cluster"))
		}
	}
	if len(errs) > 0 {
		return invalid(svc, errs...)
	}
	if len(svc.Spec.IPFamilies) == 0 {
		svc.Spec.IPFamilies = []corev1.IPFamily{a.primary}
	}
	if policyOf(svc) != corev1.IPFamilyPolicySingleStack && len(svc.Spec.IPFamilies) == 1 && len(a.ranges) == 2 {
		svc.Spec.IPFamilies = append(svc.Spec.IPFamilies, otherFamily(svc.Spec.IPFamilies[0]))
	}
	return nil
}

func otherFamily(f corev1.IPFamily) corev1.IPFamily {
	if f == corev1.IPv4Protocol {
		return corev1.IPv6Protocol
	}
	return corev1.IPv4Protocol
}

// allocClusterIPs reserves the requested cluster IPs old did not hold and picks the missing ones, one
// per family.
func (a *Allocator) allocClusterIPs(ctx context.Context, svc, old *corev1.Service, o owner, t *txn) error {
	if svc.Spec.Type == corev1.ServiceTypeExternalName || (len(svc.Spec.ClusterIPs) > 0 && svc.Spec.ClusterIPs[0] == corev1.ClusterIPNone) {
		return nil
	}
	requested := slices.Clone(svc.Spec.ClusterIPs)
	for i := len(svc.Spec.ClusterIPs); i < len(svc.Spec.IPFamilies); i++ {
		svc.Spec.ClusterIPs = append(svc.Spec.ClusterIPs, "")
	}
	var held []string
	if old != nil && old.Spec.Type != corev1.ServiceTypeExternalName {
		held = old.Spec.ClusterIPs
	}
	for i, fam := range svc.Spec.IPFamilies {
		ip := svc.Spec.ClusterIPs[i]
		if ip == "" {
			next, err := a.reserveNextIP(ctx, fam, o)
			if errors.Is(err, errFull) {
				return apierrors.NewInternalError(fmt.Errorf("failed to allocate a serviceIP for Service %q: %w", svc.Name, err))
			}
			if err != nil {
				return apierrors.NewInternalError(fmt.Errorf("allocating a cluster IP for Service %q: %w", svc.Name, err))
			}
			t.created = append(t.created, ipKey(next))
			svc.Spec.ClusterIPs[i] = next
			continue
		}
		if slices.Contains(held, ip) {
			continue
		}
		created, err := a.reserveIP(ctx, fam, ip, o)
		if err != nil && !isRefusal(err) {
			return apierrors.NewInternalError(fmt.Errorf("reserving the cluster IP %s for Service %q: %w", ip, svc.Name, err))
		}
		if err != nil {
			return invalid(svc, field.Invalid(field.NewPath("spec", "clusterIPs"), requested, fmt.Sprintf("failed to allocate IP %v: %v", ip, err)))
		}
		if created {
			t.created = append(t.created, ipKey(ip))
		}
	}
	if len(svc.Spec.ClusterIPs) > 0 {
		svc.Spec.ClusterIP = svc.Spec.ClusterIPs[0]
	}
	return nil
}

// allocNodePorts is kube's initNodePorts and allocHealthCheckNodePort: ports of one number share a
// node port; a requested one must be in the range and free.
func (a *Allocator) allocNodePorts(ctx context.Context, svc, old *corev1.Service, o owner, t *txn) error {
	held := map[int32]bool{}
	if old != nil {
		for _, k := range heldKeys(old) {
			if !isIPKey(k) {
				var p int32
				_, _ = fmt.Sscan(k[len(portPrefix):], &p)
				held[p] = true
			}
		}
	}
	take := func(p int32) error {
		if held[p] {
			return nil
		}
		created, err := a.reserveNodePort(ctx, p, o)
		if created {
			t.created = append(t.created, portKey(p))
			held[p] = true
		}
		return err
	}
	next := func() (int32, error) {
		p, err := a.reserveNextNodePort(ctx, o)
		if err == nil {
			t.created = append(t.created, portKey(p))
			held[p] = true
		}
		return p, err
	}
	if svc.Spec.Type == corev1.ServiceTypeNodePort || svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
		allocate := svc.Spec.Type == corev1.ServiceTypeNodePort ||
			(svc.Spec.AllocateLoadBalancerNodePorts != nil && *svc.Spec.AllocateLoadBalancerNodePorts)
		byPort := map[int32]int32{}
		for i := range svc.Spec.Ports {
			sp := &svc.Spec.Ports[i]
			if sp.NodePort == 0 && !allocate {
				continue
			}
			nodePort := field.NewPath("spec", "ports").Index(i).Child("nodePort")
			np, seen := byPort[sp.Port]
			switch {
			case !seen:
				if requested := requestedNodePort(sp.Port, svc.Spec.Ports); requested != 0 {
					if err := take(requested); err != nil {
						return nodePortError(svc, nodePort, requested, err)
					}
					sp.NodePort = requested
				} else {
					p, err := next()
					if err != nil {
						return apierrors.NewInternalError(fmt.Errorf("failed to allocate a nodePort: %w", err))
					}
					sp.NodePort = p
				}
				byPort[sp.Port] = sp.NodePort
			case sp.NodePort == 0:
				sp.NodePort = np
			case sp.NodePort != np:
				if err := take(sp.NodePort); err != nil {
					return nodePortError(svc, nodePort, sp.NodePort, err)
				}
			}
		}
	}
	if svc.Spec.Type == corev1.ServiceTypeLoadBalancer && svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal {
		if p := svc.Spec.HealthCheckNodePort; p != 0 {
			if err := take(p); err != nil {
				return apierrors.NewInternalError(fmt.Errorf("failed to allocate requested HealthCheck NodePort %v: %v", p, err))
			}
		} else {
			p, err := next()
			if err != nil {
				return apierrors.NewInternalError(fmt.Errorf("failed to allocate a HealthCheck NodePort %v: %v", p, err))
			}
			svc.Spec.HealthCheckNodePort = p
		}
	}
	return nil
}

func nodePortError(svc *corev1.Service, p *field.Path, port int32, err error) error {
	if !isRefusal(err) {
		return apierrors.NewInternalError(fmt.Errorf("reserving the node port %d for Service %q: %w", port, svc.Name, err))
	}
	return invalid(svc, field.Invalid(p, port, err.Error()))
}

// requestedNodePort is the node port a port of this number asks for, if any does.
func requestedNodePort(port int32, ports []corev1.ServicePort) int32 {
	for _, p := range ports {
		if p.Port == port && p.NodePort != 0 {
			return p.NodePort
		}
	}
	return 0
}
