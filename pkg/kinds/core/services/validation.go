// Ported from k8s.io/kubernetes v1.37.2 pkg/apis/core/validation/validation.go (ValidateService and
// the functions it calls).

package services

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"

	"github.com/apictl/apictl/pkg/kinds/validation"
)

// These follow kube's pkg/apis/core/validation (validateService and what it calls), with kube's
// messages. Left out: the topology annotations' agreement, loadBalancerSourceRanges given as an
// annotation, and the warnings kube returns beside the errors.

var (
	supportedSessionAffinityTypes = sets.New(corev1.ServiceAffinityClientIP, corev1.ServiceAffinityNone)
	supportedServiceTypes         = sets.New(corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort,
		corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeExternalName)
	supportedInternalTrafficPolicies = sets.New(corev1.ServiceInternalTrafficPolicyCluster, corev1.ServiceInternalTrafficPolicyLocal)
	supportedExternalTrafficPolicies = sets.New(corev1.ServiceExternalTrafficPolicyCluster, corev1.ServiceExternalTrafficPolicyLocal)
	supportedIPFamilies              = sets.New(corev1.IPv4Protocol, corev1.IPv6Protocol)
	supportedIPFamilyPolicies        = sets.New(corev1.IPFamilyPolicySingleStack, corev1.IPFamilyPolicyPreferDualStack,
		corev1.IPFamilyPolicyRequireDualStack)
	supportedLoadBalancerIPModes = sets.New(corev1.LoadBalancerIPModeVIP, corev1.LoadBalancerIPModeProxy)
	// kube 1.37 has PreferSameTrafficDistribution on by default.
	supportedTrafficDistributions = []string{corev1.ServiceTrafficDistributionPreferClose,
		corev1.ServiceTrafficDistributionPreferSameZone, corev1.ServiceTrafficDistributionPreferSameNode}
)

// maxClientIPAffinitySeconds is kube's MaxClientIPServiceAffinitySeconds.
const maxClientIPAffinitySeconds = 86400

func isHeadless(s *corev1.Service) bool { return s.Spec.ClusterIP == corev1.ClusterIPNone }

// validateService is kube's validateService; old is nil on create.
func validateService(s, old *corev1.Service) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	if len(s.Spec.Ports) == 0 && !isHeadless(s) && s.Spec.Type != corev1.ServiceTypeExternalName {
		errs = append(errs, field.Required(spec.Child("ports"), ""))
	}
	errs = append(errs, validateServiceTypeFields(s, spec)...)
	names := sets.New[string]()
	for i := range s.Spec.Ports {
		errs = append(errs, validateServicePort(&s.Spec.Ports[i], len(s.Spec.Ports) > 1, names, spec.Child("ports").Index(i))...)
	}
	if s.Spec.Selector != nil {
		errs = append(errs, metavalidation.ValidateLabels(s.Spec.Selector, spec.Child("selector"))...)
	}
	errs = append(errs, validateSessionAffinity(s, spec)...)
	errs = append(errs, validateClusterIPsRelatedFields(s, old)...)
	errs = append(errs, validateExternalIPs(s, old, spec)...)
	errs = append(errs, validateServiceType(s, spec)...)
	errs = append(errs, validateUniquePorts(s, spec)...)
	errs = append(errs, validateLoadBalancerFields(s, old, spec)...)
	errs = append(errs, validateLoadBalancerClass(s, old)...)
	errs = append(errs, validateExternalTrafficPolicy(s)...)
	errs = append(errs, validateInternalTraffic(s, spec)...)
	return errs
}

// validateServiceTypeFields checks the fields a headless or ExternalName service may not have.
func validateServiceTypeFields(s *corev1.Service, spec *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch s.Spec.Type {
	case corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeNodePort:
		if isHeadless(s) {
			errs = append(errs, field.Invalid(spec.Child("clusterIPs").Index(0), s.Spec.ClusterIPs[0],
				fmt.Sprintf("may not be set to 'None' for %s services", s.Spec.Type)))
		}
	case corev1.ServiceTypeExternalName:
		if len(s.Spec.ClusterIPs) > 0 {
			errs = append(errs, field.Forbidden(spec.Child("clusterIPs"), "may not be set for ExternalName services"))
		}
		if len(s.Spec.IPFamilies) > 0 {
			errs = append(errs, field.Forbidden(spec.Child("ipFamilies"), "may not be set for ExternalName services"))
		}
		if s.Spec.IPFamilyPolicy != nil {
			errs = append(errs, field.Forbidden(spec.Child("ipFamilyPolicy"), "may not be set for ExternalName services"))
		}
		// A trailing dot makes the name fully qualified.
		if cname := strings.TrimSuffix(s.Spec.ExternalName, "."); cname != "" {
			errs = append(errs, validation.Each(spec.Child("externalName"), cname, utilvalidation.IsDNS1123Subdomain(cname))...)
		} else {
			errs = append(errs, field.Required(spec.Child("externalName"), ""))
		}
	}
	return errs
}

// validateSessionAffinity checks sessionAffinity and its config.
func validateSessionAffinity(s *corev1.Service, spec *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch a := s.Spec.SessionAffinity; {
	case a == "":
		errs = append(errs, field.Required(spec.Child("sessionAffinity"), ""))
	case !supportedSessionAffinityTypes.Has(a):
		errs = append(errs, field.NotSupported(spec.Child("sessionAffinity"), a, sets.List(supportedSessionAffinityTypes)))
	case a == corev1.ServiceAffinityClientIP:
		errs = append(errs, validateClientIPAffinity(s.Spec.SessionAffinityConfig, spec.Child("sessionAffinityConfig"))...)
	case a == corev1.ServiceAffinityNone && s.Spec.SessionAffinityConfig != nil:
		errs = append(errs, field.Forbidden(spec.Child("sessionAffinityConfig"),
			fmt.Sprintf("must not be set when session affinity is %s", corev1.ServiceAffinityNone)))
	}
	return errs
}

// validateExternalIPs checks externalIPs; addresses old already had keep the legacy forms kube tolerates.
func validateExternalIPs(s, old *corev1.Service, spec *field.Path) field.ErrorList {
	var errs field.ErrorList
	var oldExternal []string
	if old != nil {
		oldExternal = old.Spec.ExternalIPs
	}
	for i, ip := range s.Spec.ExternalIPs {
		p := spec.Child("externalIPs").Index(i)
		if e := utilvalidation.IsValidIPForLegacyField(p, ip, true, oldExternal); len(e) > 0 {
			errs = append(errs, e...)
		} else {
			errs = append(errs, validation.EndpointIP(ip, p)...)
		}
	}
	return errs
}

// validateServiceType checks type, and that a ClusterIP service sets no node port.
func validateServiceType(s *corev1.Service, spec *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch t := s.Spec.Type; {
	case t == "":
		errs = append(errs, field.Required(spec.Child("type"), ""))
	case !supportedServiceTypes.Has(t):
		errs = append(errs, field.NotSupported(spec.Child("type"), t, sets.List(supportedServiceTypes)))
	case t == corev1.ServiceTypeClusterIP:
		for i, p := range s.Spec.Ports {
			if p.NodePort != 0 {
				errs = append(errs, field.Forbidden(spec.Child("ports").Index(i).Child("nodePort"), "may not be used when `type` is 'ClusterIP'"))
			}
		}
	}
	return errs
}

// validateUniquePorts checks that no two ports share a protocol and port, nor a protocol and node port.
func validateUniquePorts(s *corev1.Service, spec *field.Path) field.ErrorList {
	var errs field.ErrorList
	type protoPort struct {
		proto corev1.Protocol
		port  int32
	}
	seenNodePorts := map[protoPort]bool{}
	for i, p := range s.Spec.Ports {
		if p.NodePort == 0 {
			continue
		}
		k := protoPort{p.Protocol, p.NodePort}
		if seenNodePorts[k] {
			errs = append(errs, field.Duplicate(spec.Child("ports").Index(i).Child("nodePort"), p.NodePort))
		}
		seenNodePorts[k] = true
	}
	seenPorts := map[protoPort]bool{}
	for i, p := range s.Spec.Ports {
		k := protoPort{p.Protocol, p.Port}
		if seenPorts[k] {
			// kube reports the internal ServicePort it used as the key.
			errs = append(errs, field.Duplicate(spec.Child("ports").Index(i), internalServicePort{Protocol: p.Protocol, Port: p.Port}))
		}
		seenPorts[k] = true
	}
	return errs
}

// validateLoadBalancerFields checks the fields only a LoadBalancer service may (or must) set;
// source ranges old already had keep the legacy forms kube tolerates.
func validateLoadBalancerFields(s, old *corev1.Service, spec *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(s.Spec.LoadBalancerSourceRanges) > 0 {
		p := spec.Child("LoadBalancerSourceRanges")
		if s.Spec.Type != corev1.ServiceTypeLoadBalancer {
			errs = append(errs, field.Forbidden(p, "may only be used when `type` is 'LoadBalancer'"))
		}
		var existing []string
		if old != nil {
			for _, v := range old.Spec.LoadBalancerSourceRanges {
				existing = append(existing, strings.TrimSpace(v))
			}
		}
		for i, v := range s.Spec.LoadBalancerSourceRanges {
			errs = append(errs, utilvalidation.IsValidCIDRForLegacyField(p.Index(i), strings.TrimSpace(v), true, existing)...)
		}
	}
	if s.Spec.AllocateLoadBalancerNodePorts != nil && s.Spec.Type != corev1.ServiceTypeLoadBalancer {
		errs = append(errs, field.Forbidden(spec.Child("allocateLoadBalancerNodePorts"), "may only be used when `type` is 'LoadBalancer'"))
	}
	if s.Spec.Type == corev1.ServiceTypeLoadBalancer && s.Spec.AllocateLoadBalancerNodePorts == nil {
		errs = append(errs, field.Required(field.NewPath("allocateLoadBalancerNodePorts"), ""))
	}
	return errs
}

// validateInternalTraffic checks internalTrafficPolicy and trafficDistribution.
func validateInternalTraffic(s *corev1.Service, spec *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.Spec.InternalTrafficPolicy == nil && needsNodePortOrClusterIPType(s.Spec.Type) {
		// Not required of other types: kube did not check before the field went beta.
		errs = append(errs, field.Required(spec.Child("internalTrafficPolicy"), ""))
	}
	if p := s.Spec.InternalTrafficPolicy; p != nil && !supportedInternalTrafficPolicies.Has(*p) {
		errs = append(errs, field.NotSupported(spec.Child("internalTrafficPolicy"), *p, sets.List(supportedInternalTrafficPolicies)))
	}
	if d := s.Spec.TrafficDistribution; d != nil && !slices.Contains(supportedTrafficDistributions, *d) {
		errs = append(errs, field.NotSupported(spec.Child("trafficDistribution"), *d, supportedTrafficDistributions))
	}
	return errs
}

// internalServicePort is kube's internal ServicePort, whose fields have no JSON names: a duplicate
// port is reported in that form.
type internalServicePort struct {
	Name        string
	Protocol    corev1.Protocol
	AppProtocol *string
	Port        int32
	TargetPort  intstr.IntOrString
	NodePort    int32
}

func validateServicePort(sp *corev1.ServicePort, requireName bool, names sets.Set[string], p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if requireName && sp.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	} else if sp.Name != "" {
		errs = append(errs, validation.Each(p.Child("name"), sp.Name, utilvalidation.IsDNS1123Label(sp.Name))...)
		if names.Has(sp.Name) {
			errs = append(errs, field.Duplicate(p.Child("name"), sp.Name))
		} else {
			names.Insert(sp.Name)
		}
	}
	errs = append(errs, validation.Each(p.Child("port"), sp.Port, utilvalidation.IsValidPortNum(int(sp.Port)))...)
	errs = append(errs, validation.Protocol(sp.Protocol, p.Child("protocol"))...)
	errs = append(errs, validatePortNumOrName(sp.TargetPort, p.Child("targetPort"))...)
	if sp.AppProtocol != nil {
		errs = append(errs, validation.Each(p.Child("appProtocol"), *sp.AppProtocol, utilvalidation.IsQualifiedName(*sp.AppProtocol))...)
	}
	return errs
}

// validatePortNumOrName is kube's ValidatePortNumOrName.
func validatePortNumOrName(port intstr.IntOrString, p *field.Path) field.ErrorList {
	if port.Type == intstr.String {
		return validation.Each(p, port.StrVal, utilvalidation.IsValidPortName(port.StrVal))
	}
	return validation.Each(p, port.IntValue(), utilvalidation.IsValidPortNum(port.IntValue()))
}

func validateClientIPAffinity(c *corev1.SessionAffinityConfig, p *field.Path) field.ErrorList {
	when := fmt.Sprintf("when session affinity type is %s", corev1.ServiceAffinityClientIP)
	switch {
	case c == nil:
		return field.ErrorList{field.Required(p, when)}
	case c.ClientIP == nil:
		return field.ErrorList{field.Required(p.Child("clientIP"), when)}
	case c.ClientIP.TimeoutSeconds == nil:
		return field.ErrorList{field.Required(p.Child("clientIP", "timeoutSeconds"), when)}
	}
	if t := c.ClientIP.TimeoutSeconds; *t <= 0 || *t > maxClientIPAffinitySeconds {
		return field.ErrorList{field.Invalid(p.Child("clientIP", "timeoutSeconds"), t,
			fmt.Sprintf("must be greater than 0 and less than %d", maxClientIPAffinitySeconds))}
	}
	return nil
}

func validateLoadBalancerClass(s, old *corev1.Service) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("spec", "loadBalancerClass")
	lb := s.Spec.Type == corev1.ServiceTypeLoadBalancer
	if old != nil && old.Spec.Type == corev1.ServiceTypeLoadBalancer && lb && !ptrEqual(old.Spec.LoadBalancerClass, s.Spec.LoadBalancerClass) {
		errs = append(errs, field.Invalid(p, s.Spec.LoadBalancerClass, "may not change once set"))
	}
	switch c := s.Spec.LoadBalancerClass; {
	case c == nil:
	case lb:
		errs = append(errs, validation.Each(p, *c, utilvalidation.IsQualifiedName(*c))...)
	default:
		errs = append(errs, field.Forbidden(p, "may only be used when `type` is 'LoadBalancer'"))
	}
	return errs
}

func validateExternalTrafficPolicy(s *corev1.Service) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	if !externallyAccessible(s) {
		if s.Spec.ExternalTrafficPolicy != "" {
			errs = append(errs, field.Invalid(spec.Child("externalTrafficPolicy"), s.Spec.ExternalTrafficPolicy,
				"may only be set for externally-accessible services"))
		}
	} else if s.Spec.ExternalTrafficPolicy == "" {
		errs = append(errs, field.Required(spec.Child("externalTrafficPolicy"), ""))
	} else if !supportedExternalTrafficPolicies.Has(s.Spec.ExternalTrafficPolicy) {
		errs = append(errs, field.NotSupported(spec.Child("externalTrafficPolicy"), s.Spec.ExternalTrafficPolicy,
			sets.List(supportedExternalTrafficPolicies)))
	}
	// A missing health check node port is not refused: the allocator gives one, as kube's does
	// before it validates.
	hc := spec.Child("healthCheckNodePort")
	switch {
	case !needsHealthCheck(s) && s.Spec.HealthCheckNodePort != 0:
		errs = append(errs, field.Invalid(hc, s.Spec.HealthCheckNodePort,
			"may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"))
	case needsHealthCheck(s) && s.Spec.HealthCheckNodePort != 0:
		errs = append(errs, validation.Each(hc, s.Spec.HealthCheckNodePort, utilvalidation.IsValidPortNum(int(s.Spec.HealthCheckNodePort)))...)
	}
	return errs
}

// validateClusterIPsRelatedFields is kube's ValidateServiceClusterIPsRelatedFields.
func validateClusterIPsRelatedFields(s, old *corev1.Service) field.ErrorList {
	if s.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	var errs field.ErrorList
	spec := field.NewPath("spec")
	ipsPath := spec.Child("clusterIPs")
	if s.Spec.ClusterIP != "" {
		if len(s.Spec.ClusterIPs) == 0 {
			errs = append(errs, field.Required(ipsPath, ""))
		} else if s.Spec.ClusterIPs[0] != s.Spec.ClusterIP {
			errs = append(errs, field.Invalid(ipsPath, s.Spec.ClusterIPs, "first value must match `clusterIP`"))
		}
	} else if len(s.Spec.ClusterIPs) != 0 {
		errs = append(errs, field.Invalid(ipsPath, s.Spec.ClusterIPs, "must be empty when `clusterIP` is not specified"))
	}
	seen := sets.New[corev1.IPFamily]()
	for i, f := range s.Spec.IPFamilies {
		if !supportedIPFamilies.Has(f) {
			errs = append(errs, field.NotSupported(spec.Child("ipFamilies").Index(i), f, sets.List(supportedIPFamilies)))
		}
		if seen.Has(f) {
			errs = append(errs, field.Duplicate(spec.Child("ipFamilies").Index(i), f))
		}
		seen.Insert(f)
	}
	if p := s.Spec.IPFamilyPolicy; p != nil && !supportedIPFamilyPolicies.Has(*p) {
		errs = append(errs, field.NotSupported(spec.Child("ipFamilyPolicy"), p, sets.List(supportedIPFamilyPolicies)))
	}
	var existing []string
	if old != nil {
		existing = old.Spec.ClusterIPs
	}
	invalidIPs := false
	for i, ip := range s.Spec.ClusterIPs {
		if i == 0 && ip == corev1.ClusterIPNone {
			if len(s.Spec.ClusterIPs) > 1 {
				invalidIPs = true
				errs = append(errs, field.Invalid(ipsPath, s.Spec.ClusterIPs, "'None' must be the first and only value"))
			}
			continue
		}
		e := utilvalidation.IsValidIPForLegacyField(ipsPath.Index(i), ip, true, existing)
		invalidIPs = invalidIPs || len(e) > 0
		errs = append(errs, e...)
	}
	if len(s.Spec.ClusterIPs) > 2 {
		errs = append(errs, field.Invalid(ipsPath, s.Spec.ClusterIPs, "may only hold up to 2 values"))
	}
	if invalidIPs {
		return errs
	}
	if len(s.Spec.ClusterIPs) > 1 {
		if dual, err := netutils.IsDualStackIPStrings(s.Spec.ClusterIPs); err != nil || !dual {
			errs = append(errs, field.Invalid(ipsPath, s.Spec.ClusterIPs, "may specify no more than one IP for each IP family"))
		}
	}
	if !isHeadless(s) {
		for i, ip := range s.Spec.ClusterIPs {
			if i >= len(s.Spec.IPFamilies) {
				break
			}
			v6 := netutils.IsIPv6String(ip)
			if s.Spec.IPFamilies[i] == corev1.IPv4Protocol && v6 {
				errs = append(errs, field.Invalid(ipsPath.Index(i), ip, fmt.Sprintf("expected an IPv4 value as indicated by `ipFamilies[%v]`", i)))
			}
			if s.Spec.IPFamilies[i] == corev1.IPv6Protocol && !v6 {
				errs = append(errs, field.Invalid(ipsPath.Index(i), ip, fmt.Sprintf("expected an IPv6 value as indicated by `ipFamilies[%v]`", i)))
			}
		}
	}
	return errs
}

// validateServiceUpgrade is what kube's ValidateServiceUpdate adds to validateService: cluster IPs and
// IP families may only gain or lose a secondary, the load balancer class and the health check node
// port stay.
func validateServiceUpgrade(s, old *corev1.Service) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateUpgradeDowngradeClusterIPs(old, s)...)
	errs = append(errs, validateUpgradeDowngradeIPFamilies(old, s)...)
	if needsHealthCheck(old) && needsHealthCheck(s) && s.Spec.HealthCheckNodePort != old.Spec.HealthCheckNodePort {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "healthCheckNodePort"), "field is immutable"))
	}
	return errs
}

func validateUpgradeDowngradeClusterIPs(old, s *corev1.Service) field.ErrorList {
	if s.Spec.Type == corev1.ServiceTypeExternalName || old.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	if isHeadless(old) && isHeadless(s) {
		return nil
	}
	var errs field.ErrorList
	ips := field.NewPath("spec", "clusterIPs")
	oldIPs, newIPs := old.Spec.ClusterIPs, s.Spec.ClusterIPs
	switch {
	case len(oldIPs) == len(newIPs):
		for i, ip := range oldIPs {
			if ip != newIPs[i] {
				errs = append(errs, field.Invalid(ips.Index(i), newIPs, "may not change once set"))
			}
		}
	case len(oldIPs) > len(newIPs):
		if len(newIPs) == 0 {
			errs = append(errs, field.Invalid(ips.Index(0), newIPs, "primary clusterIP can not be unset"))
		}
		if len(oldIPs) > 0 && len(newIPs) > 0 && newIPs[0] != oldIPs[0] {
			errs = append(errs, field.Invalid(ips.Index(0), newIPs, "may not change once set"))
		}
		if len(newIPs) == 1 && (s.Spec.IPFamilyPolicy == nil || *s.Spec.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack) {
			errs = append(errs, field.Invalid(field.NewPath("spec", "ipFamilyPolicy"), s.Spec.IPFamilyPolicy,
				"must be set to 'SingleStack' when releasing the secondary clusterIP"))
		}
	default:
		if len(oldIPs) > 0 && newIPs[0] != oldIPs[0] {
			errs = append(errs, field.Invalid(ips.Index(0), newIPs, "may not change once set"))
		}
	}
	return errs
}

func validateUpgradeDowngradeIPFamilies(old, s *corev1.Service) field.ErrorList {
	if s.Spec.Type == corev1.ServiceTypeExternalName || old.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	if isHeadless(old) || isHeadless(s) {
		return nil // to or from headless, or headless: families may change
	}
	var errs field.ErrorList
	fams := field.NewPath("spec", "ipFamilies")
	oldF, newF := old.Spec.IPFamilies, s.Spec.IPFamilies
	switch {
	case len(oldF) == len(newF):
		for i, f := range oldF {
			if f != newF[i] {
				errs = append(errs, field.Invalid(fams.Index(0), newF, "may not change once set"))
			}
		}
	case len(oldF) > len(newF):
		if len(s.Spec.ClusterIPs) == 0 {
			errs = append(errs, field.Invalid(fams.Index(0), newF, "primary ipFamily can not be unset"))
		}
		if len(newF) > 0 && newF[0] != oldF[0] {
			errs = append(errs, field.Invalid(fams.Index(0), s.Spec.ClusterIPs, "may not change once set"))
		}
		if len(newF) == 1 && (s.Spec.IPFamilyPolicy == nil || *s.Spec.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack) {
			errs = append(errs, field.Invalid(field.NewPath("spec", "ipFamilyPolicy"), s.Spec.IPFamilyPolicy,
				"must be set to 'SingleStack' when releasing the secondary ipFamily"))
		}
	default:
		if len(oldF) > 0 && len(newF) > 0 && newF[0] != oldF[0] {
			errs = append(errs, field.Invalid(fams.Index(0), s.Spec.ClusterIPs, "may not change once set"))
		}
	}
	return errs
}

// validateLoadBalancerStatus is kube's ValidateServiceStatusUpdate past the metadata.
func validateLoadBalancerStatus(s *corev1.Service) field.ErrorList {
	ingress := field.NewPath("status", "loadBalancer", "ingress")
	if s.Spec.Type != corev1.ServiceTypeLoadBalancer && len(s.Status.LoadBalancer.Ingress) != 0 {
		return field.ErrorList{field.Forbidden(ingress, "may only be used when `spec.type` is 'LoadBalancer'")}
	}
	var errs field.ErrorList
	for i, in := range s.Status.LoadBalancer.Ingress {
		p := ingress.Index(i)
		if in.IP != "" {
			errs = append(errs, utilvalidation.IsValidIPForLegacyField(p.Child("ip"), in.IP, true, nil)...)
		}
		switch {
		case in.IPMode == nil:
			if in.IP != "" {
				errs = append(errs, field.Required(p.Child("ipMode"), "must be specified when `ip` is set"))
			}
		case in.IP == "":
			errs = append(errs, field.Forbidden(p.Child("ipMode"), "may not be specified when `ip` is not set"))
		case !supportedLoadBalancerIPModes.Has(*in.IPMode):
			errs = append(errs, field.NotSupported(p.Child("ipMode"), in.IPMode, sets.List(supportedLoadBalancerIPModes)))
		}
		if in.Hostname != "" {
			errs = append(errs, validation.Each(p.Child("hostname"), in.Hostname, utilvalidation.IsDNS1123Subdomain(in.Hostname))...)
			if netutils.ParseIPSloppy(in.Hostname) != nil {
				errs = append(errs, field.Invalid(p.Child("hostname"), in.Hostname, "must be a DNS name, not an IP address"))
			}
		}
	}
	return errs
}
