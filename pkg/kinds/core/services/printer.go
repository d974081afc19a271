package services

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/apictl/apictl/pkg/kinds/printers"
)

func cells(s *corev1.Service, now time.Time) []any {
	clusterIP := "<none>"
	if len(s.Spec.ClusterIPs) > 0 {
		clusterIP = s.Spec.ClusterIPs[0]
	}
	ports := portsCell(s.Spec.Ports)
	if ports == "" {
		ports = "<none>"
	}
	return []any{s.Name, string(s.Spec.Type), clusterIP, externalIP(s), ports, printers.Age(s.CreationTimestamp, now),
		labels.FormatLabels(s.Spec.Selector)}
}

// externalIP is kube's getServiceExternalIP, wide (the server's printers always are).
func externalIP(s *corev1.Service) string {
	switch s.Spec.Type {
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort:
		if len(s.Spec.ExternalIPs) > 0 {
			return strings.Join(s.Spec.ExternalIPs, ",")
		}
		return "<none>"
	case corev1.ServiceTypeLoadBalancer:
		var ingress []string
		for _, in := range s.Status.LoadBalancer.Ingress {
			switch {
			case in.IP != "":
				ingress = append(ingress, in.IP)
			case in.Hostname != "":
				ingress = append(ingress, in.Hostname)
			}
		}
		slices.Sort(ingress)
		ingress = slices.Compact(ingress)
		all := append(ingress, s.Spec.ExternalIPs...)
		if len(all) == 0 {
			return "<pending>"
		}
		return strings.Join(all, ",")
	case corev1.ServiceTypeExternalName:
		return s.Spec.ExternalName
	}
	return "<unknown>"
}

// portsCell is kube's makePortString: port/protocol, or port:nodePort/protocol.
func portsCell(ports []corev1.ServicePort) string {
	pieces := make([]string, len(ports))
	for i, p := range ports {
		pieces[i] = fmt.Sprintf("%d/%s", p.Port, p.Protocol)
		if p.NodePort > 0 {
			pieces[i] = fmt.Sprintf("%d:%d/%s", p.Port, p.NodePort, p.Protocol)
		}
	}
	return strings.Join(pieces, ",")
}
