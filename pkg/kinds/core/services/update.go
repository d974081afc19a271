package services

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
)

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
