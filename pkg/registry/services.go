package registry

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// serviceRules are kube's for core v1 Services (pkg/registry/core/service and the v1 defaults). The
// cluster IPs, IP families and node ports that depend on --service-cluster-ip-range are the
// allocator's (pkg/allocator), which runs as the object is stored.
type serviceRules struct{}

// setDefaults is kube's SetDefaults_Service.
func (serviceRules) setDefaults(obj runtime.Object) {
	s := obj.(*corev1.Service)
	spec := &s.Spec
	if spec.SessionAffinity == "" {
		spec.SessionAffinity = corev1.ServiceAffinityNone
	}
	if spec.SessionAffinity == corev1.ServiceAffinityNone {
		spec.SessionAffinityConfig = nil
	}
	if spec.SessionAffinity == corev1.ServiceAffinityClientIP {
		if c := spec.SessionAffinityConfig; c == nil || c.ClientIP == nil || c.ClientIP.TimeoutSeconds == nil {
			timeout := corev1.DefaultClientIPServiceAffinitySeconds
			spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: &timeout}}
		}
	}
	if spec.Type == "" {
		spec.Type = corev1.ServiceTypeClusterIP
	}
	for i := range spec.Ports {
		p := &spec.Ports[i]
		if p.Protocol == "" {
			p.Protocol = corev1.ProtocolTCP
		}
		if p.TargetPort == intstr.FromInt32(0) || p.TargetPort == intstr.FromString("") {
			p.TargetPort = intstr.FromInt32(p.Port)
		}
	}
	if externallyAccessible(s) && spec.ExternalTrafficPolicy == "" {
		spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
	}
	if spec.InternalTrafficPolicy == nil && needsNodePortOrClusterIPType(spec.Type) {
		cluster := corev1.ServiceInternalTrafficPolicyCluster
		spec.InternalTrafficPolicy = &cluster
	}
	if spec.Type == corev1.ServiceTypeLoadBalancer {
		if spec.AllocateLoadBalancerNodePorts == nil {
			yes := true
			spec.AllocateLoadBalancerNodePorts = &yes
		}
		vip := corev1.LoadBalancerIPModeVIP
		for i, in := range s.Status.LoadBalancer.Ingress {
			if in.IP != "" && in.IPMode == nil {
				s.Status.LoadBalancer.Ingress[i].IPMode = &vip
			}
		}
	}
}

func needsNodePortOrClusterIPType(t corev1.ServiceType) bool {
	return t == corev1.ServiceTypeNodePort || t == corev1.ServiceTypeLoadBalancer || t == corev1.ServiceTypeClusterIP
}

// externallyAccessible is kube's: load balancers, node ports, and cluster IPs with external IPs.
func externallyAccessible(s *corev1.Service) bool {
	return s.Spec.Type == corev1.ServiceTypeLoadBalancer || s.Spec.Type == corev1.ServiceTypeNodePort ||
		(s.Spec.Type == corev1.ServiceTypeClusterIP && len(s.Spec.ExternalIPs) > 0)
}

// needsHealthCheck is kube's: a load balancer with the Local external traffic policy.
func needsHealthCheck(s *corev1.Service) bool {
	return s.Spec.Type == corev1.ServiceTypeLoadBalancer && s.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal
}

// prepareCreate clears the status and makes clusterIPs follow a lone clusterIP, as kube's strategy and
// REST do before anything looks at them.
func (serviceRules) prepareCreate(obj runtime.Object) {
	s := obj.(*corev1.Service)
	s.Status = corev1.ServiceStatus{}
	if s.Spec.ClusterIP != "" && len(s.Spec.ClusterIPs) == 0 {
		s.Spec.ClusterIPs = []string{s.Spec.ClusterIP}
	}
	dropExternalNameTrafficPolicy(s)
}

// dropExternalNameTrafficPolicy removes the internalTrafficPolicy an ExternalName service has no use
// for. kube keeps it in storage and drops it from every read; it is dropped here before the write,
// after managedFields were recorded, so that clients read the same.
func dropExternalNameTrafficPolicy(s *corev1.Service) {
	if s.Spec.Type == corev1.ServiceTypeExternalName {
		s.Spec.InternalTrafficPolicy = nil
	}
}

// prepareUpdate keeps the status, fills in the allocated values a client left out (kube's
// patchAllocatedValues), keeps clusterIP and clusterIPs in step (normalizeClusterIPs) and drops the
// fields the new type no longer uses (dropTypeDependentFields).
func (serviceRules) prepareUpdate(obj, old runtime.Object) {
	s, o := obj.(*corev1.Service), old.(*corev1.Service)
	s.Status = o.Status
	patchAllocatedValues(s, o)
	normalizeClusterIPs(s, o)
	dropTypeDependentFields(s, o)
	dropExternalNameTrafficPolicy(s)
}

func needsClusterIP(s *corev1.Service) bool { return s.Spec.Type != corev1.ServiceTypeExternalName }

func needsNodePort(s *corev1.Service) bool {
	return s.Spec.Type == corev1.ServiceTypeNodePort || s.Spec.Type == corev1.ServiceTypeLoadBalancer
}

func patchAllocatedValues(s, o *corev1.Service) {
	if needsClusterIP(o) && needsClusterIP(s) {
		if s.Spec.ClusterIP == "" {
			s.Spec.ClusterIP = o.Spec.ClusterIP
		}
		if len(s.Spec.ClusterIPs) == 0 && len(o.Spec.ClusterIPs) > 0 {
			s.Spec.ClusterIPs = o.Spec.ClusterIPs
		}
	}
	if needsNodePort(o) && needsNodePort(s) {
		// Node ports are matched by port name; one the new ports already use is not taken twice.
		oldUsed, newUsed := nodePorts(o), nodePorts(s)
		byName := map[string]int32{}
		for _, p := range o.Spec.Ports {
			byName[p.Name] = p.NodePort
		}
		for i := range s.Spec.Ports {
			p := &s.Spec.Ports[i]
			if v := byName[p.Name]; p.NodePort == 0 && !(oldUsed[v] && newUsed[v]) {
				p.NodePort = v
			}
		}
	}
	if needsHealthCheck(o) && needsHealthCheck(s) && s.Spec.HealthCheckNodePort == 0 {
		s.Spec.HealthCheckNodePort = o.Spec.HealthCheckNodePort
	}
}

func normalizeClusterIPs(s, o *corev1.Service) {
	if len(o.Spec.ClusterIPs) > 0 && len(s.Spec.ClusterIPs) == 0 && o.Spec.ClusterIP == s.Spec.ClusterIP {
		// An old client that knows only clusterIP.
		s.Spec.ClusterIPs = o.Spec.ClusterIPs
	}
	if o.Spec.ClusterIP == s.Spec.ClusterIP || !sameClusterIPs(s, o) {
		return
	}
	if o.Spec.ClusterIP != "" && s.Spec.ClusterIP == "" {
		s.Spec.ClusterIPs = nil // cleared, clusterIPs untouched: cleared on the client's behalf
		return
	}
	s.Spec.ClusterIPs = []string{s.Spec.ClusterIP}
}

func sameClusterIPs(s, o *corev1.Service) bool {
	return slices.Equal(s.Spec.ClusterIPs, o.Spec.ClusterIPs)
}

func dropTypeDependentFields(s, o *corev1.Service) {
	if needsClusterIP(o) && !needsClusterIP(s) {
		if s.Spec.ClusterIP == o.Spec.ClusterIP && sameClusterIPs(s, o) {
			s.Spec.ClusterIP, s.Spec.ClusterIPs = "", nil
		}
		if slices.Equal(s.Spec.IPFamilies, o.Spec.IPFamilies) {
			s.Spec.IPFamilies = nil
		}
		if ptrEqual(s.Spec.IPFamilyPolicy, o.Spec.IPFamilyPolicy) {
			s.Spec.IPFamilyPolicy = nil
		}
	}
	if needsNodePort(o) && !needsNodePort(s) && sameNodePorts(s, o) {
		for i := range s.Spec.Ports {
			s.Spec.Ports[i].NodePort = 0
		}
	}
	if needsHealthCheck(o) && !needsHealthCheck(s) && s.Spec.HealthCheckNodePort == o.Spec.HealthCheckNodePort {
		s.Spec.HealthCheckNodePort = 0
	}
	if o.Spec.Type == corev1.ServiceTypeLoadBalancer && s.Spec.Type != corev1.ServiceTypeLoadBalancer &&
		s.Spec.AllocateLoadBalancerNodePorts != nil && o.Spec.AllocateLoadBalancerNodePorts != nil &&
		*s.Spec.AllocateLoadBalancerNodePorts == *o.Spec.AllocateLoadBalancerNodePorts {
		s.Spec.AllocateLoadBalancerNodePorts = nil
	}
	if o.Spec.Type == corev1.ServiceTypeLoadBalancer && s.Spec.Type != corev1.ServiceTypeLoadBalancer &&
		ptrEqual(s.Spec.LoadBalancerClass, o.Spec.LoadBalancerClass) {
		s.Spec.LoadBalancerClass = nil
	}
	if externallyAccessible(o) && !externallyAccessible(s) && s.Spec.ExternalTrafficPolicy == o.Spec.ExternalTrafficPolicy {
		s.Spec.ExternalTrafficPolicy = ""
	}
	if s.Spec.Type != corev1.ServiceTypeLoadBalancer {
		s.Status.LoadBalancer = corev1.LoadBalancerStatus{}
	}
}

// sameNodePorts: the new ports add no node port the old ones did not have.
func sameNodePorts(s, o *corev1.Service) bool {
	old := nodePorts(o)
	for p := range nodePorts(s) {
		if !old[p] {
			return false
		}
	}
	return true
}

func nodePorts(s *corev1.Service) map[int32]bool {
	m := map[int32]bool{}
	for _, p := range s.Spec.Ports {
		if p.NodePort != 0 {
			m[p.NodePort] = true
		}
	}
	return m
}

func ptrEqual[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// validate checks a new service. kube checks the cluster IPs, IP families and policy on their own
// first, as its allocator prepares them, and stops there if they are wrong: only then come the
// metadata and the rest of the service.
func (serviceRules) validate(obj runtime.Object) field.ErrorList {
	s := obj.(*corev1.Service)
	if errs := validateClusterIPsRelatedFields(s, nil); len(errs) > 0 {
		return errs
	}
	errs := apivalidation.ValidateObjectMeta(&s.ObjectMeta, true, apivalidation.NameIsDNSLabel, field.NewPath("metadata"))
	return append(errs, validateService(s, nil)...)
}

// validatesMeta: validate checks the metadata itself, after the cluster IPs.
func (serviceRules) validatesMeta() {}

func (serviceRules) validateUpdate(obj, old runtime.Object) field.ErrorList {
	s, o := obj.(*corev1.Service), old.(*corev1.Service)
	errs := validateServiceUpgrade(s, o)
	return append(errs, validateService(s, o)...)
}

func (serviceRules) validateStatusUpdate(obj, _ runtime.Object) field.ErrorList {
	return validateLoadBalancerStatus(obj.(*corev1.Service))
}

// statusUpdate keeps the spec of old and what only the server sets, as kube's service status
// strategy does (k8s.io/kubernetes v1.37.2 pkg/registry/core/service/strategy.go resets only the
// spec): a status write may change labels and annotations (conformance: "should complete a service
// status lifecycle" patches an annotation with the load balancer's status).
func (serviceRules) statusUpdate(obj, old runtime.Object) runtime.Object {
	out, oldSvc := obj.(*corev1.Service).DeepCopy(), old.(*corev1.Service)
	prepareMetaForUpdate(out, oldSvc)
	out.Spec = oldSvc.Spec
	return out
}

func (serviceRules) warningsOnCreate(obj runtime.Object) []string {
	return serviceWarnings(obj.(*corev1.Service))
}

func (serviceRules) warningsOnUpdate(obj, _ runtime.Object) []string {
	return serviceWarnings(obj.(*corev1.Service))
}

// serviceWarnings are kube's (pkg/api/service GetWarningsForService), in its order.
func serviceWarnings(s *corev1.Service) []string {
	var warnings []string
	if _, ok := s.Annotations[corev1.DeprecatedAnnotationTopologyAwareHints]; ok {
		warnings = append(warnings, fmt.Sprintf("annotation %s is deprecated, please use %s instead",
			corev1.DeprecatedAnnotationTopologyAwareHints, corev1.AnnotationTopologyMode))
	}
	if s.Spec.ClusterIP != corev1.ClusterIPNone && s.Spec.ClusterIP != "" {
		for i, ip := range s.Spec.ClusterIPs {
			warnings = append(warnings, utilvalidation.GetWarningsForIP(field.NewPath("spec", "clusterIPs").Index(i), ip)...)
		}
	}
	headless := s.Spec.Type == corev1.ServiceTypeClusterIP && s.Spec.ClusterIP == corev1.ClusterIPNone
	if headless {
		if s.Spec.LoadBalancerIP != "" {
			warnings = append(warnings, "spec.loadBalancerIP is ignored for headless services")
		}
		if len(s.Spec.ExternalIPs) > 0 {
			warnings = append(warnings, "spec.externalIPs is ignored for headless services")
		}
		if s.Spec.SessionAffinity != corev1.ServiceAffinityNone {
			warnings = append(warnings, "spec.SessionAffinity is ignored for headless services")
		}
	}
	for i, ip := range s.Spec.ExternalIPs {
		warnings = append(warnings, utilvalidation.GetWarningsForIP(field.NewPath("spec", "externalIPs").Index(i), ip)...)
	}
	if len(s.Spec.ExternalIPs) > 0 && !headless && s.Spec.Type != corev1.ServiceTypeExternalName {
		warnings = append(warnings, "spec.externalIPs is deprecated and may no longer be implemented in some clusters")
	}
	if s.Spec.LoadBalancerIP != "" {
		warnings = append(warnings, utilvalidation.GetWarningsForIP(field.NewPath("spec", "loadBalancerIP"), s.Spec.LoadBalancerIP)...)
	}
	for i, cidr := range s.Spec.LoadBalancerSourceRanges {
		warnings = append(warnings, utilvalidation.GetWarningsForCIDR(field.NewPath("spec", "loadBalancerSourceRanges").Index(i), cidr)...)
	}
	if s.Spec.Type == corev1.ServiceTypeExternalName && len(s.Spec.ExternalIPs) > 0 {
		warnings = append(warnings, fmt.Sprintf("spec.externalIPs is ignored when spec.type is %q", corev1.ServiceTypeExternalName))
	}
	if s.Spec.Type != corev1.ServiceTypeExternalName && s.Spec.ExternalName != "" {
		warnings = append(warnings, fmt.Sprintf("spec.externalName is ignored when spec.type is not %q", corev1.ServiceTypeExternalName))
	}
	if td := s.Spec.TrafficDistribution; td != nil && *td == corev1.ServiceTrafficDistributionPreferClose {
		warnings = append(warnings, fmt.Sprintf("spec.trafficDistribution: %q is deprecated; use %q",
			corev1.ServiceTrafficDistributionPreferClose, corev1.ServiceTrafficDistributionPreferSameZone))
	}
	return warnings
}
