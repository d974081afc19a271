//lint:file-ignore SA1019 core v1 Endpoints are deprecated in kube, which still serves them: so does apictl.

package tables

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/apictl/apictl/pkg/kinds/printers"
)

// maxListed is how many endpoints or ports kube's printers list before "+ N more...".
const maxListed = 3

// servicePrinter is kube's printService: the cluster IP, the external IPs (or the load balancer's, or
// the external name), the ports with their node ports, and in -o wide the selector.
func servicePrinter() printer {
	doc := corev1.ServiceSpec{}.SwaggerDoc()
	return printer{columns: []metav1.TableColumnDefinition{
		printers.NameColumn(),
		printers.Column("Type", doc["type"]),
		printers.Column("Cluster-IP", doc["clusterIP"]),
		printers.Column("External-IP", doc["externalIPs"]),
		printers.Column("Port(s)", doc["ports"]),
		printers.AgeColumn(),
		printers.Wide(printers.Column("Selector", doc["selector"])),
	}, cells: typed(serviceCells)}
}

// endpointsPrinter is kube's printEndpoints.
func endpointsPrinter() printer {
	return printer{columns: []metav1.TableColumnDefinition{
		printers.NameColumn(), printers.Column("Endpoints", corev1.Endpoints{}.SwaggerDoc()["subsets"]), printers.AgeColumn(),
	}, cells: typed(endpointsCells)}
}

// endpointSlicePrinter is kube's printEndpointSlice.
func endpointSlicePrinter() printer {
	doc := discoveryv1.EndpointSlice{}.SwaggerDoc()
	return printer{columns: []metav1.TableColumnDefinition{
		printers.NameColumn(),
		printers.Column("AddressType", doc["addressType"]),
		printers.Column("Ports", doc["ports"]),
		printers.Column("Endpoints", doc["endpoints"]),
		printers.AgeColumn(),
	}, cells: typed(endpointSliceCells)}
}

func serviceCells(s *corev1.Service, now time.Time) []any {
	clusterIP := "<none>"
	if len(s.Spec.ClusterIPs) > 0 {
		clusterIP = s.Spec.ClusterIPs[0]
	}
	ports := servicePorts(s.Spec.Ports)
	if ports == "" {
		ports = "<none>"
	}
	return []any{s.Name, string(s.Spec.Type), clusterIP, serviceExternalIP(s), ports, printers.Age(s.CreationTimestamp, now),
		labels.FormatLabels(s.Spec.Selector)}
}

// serviceExternalIP is kube's getServiceExternalIP, wide (the server's printers always are).
func serviceExternalIP(s *corev1.Service) string {
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

// servicePorts is kube's makePortString: port/protocol, or port:nodePort/protocol.
func servicePorts(ports []corev1.ServicePort) string {
	pieces := make([]string, len(ports))
	for i, p := range ports {
		pieces[i] = fmt.Sprintf("%d/%s", p.Port, p.Protocol)
		if p.NodePort > 0 {
			pieces[i] = fmt.Sprintf("%d:%d/%s", p.Port, p.NodePort, p.Protocol)
		}
	}
	return strings.Join(pieces, ",")
}

func endpointsCells(e *corev1.Endpoints, now time.Time) []any {
	return []any{e.Name, formatEndpoints(e), printers.Age(e.CreationTimestamp, now)}
}

// formatEndpoints is kube's: host:port for every address and port of every subset (bare addresses for
// a subset without ports), the first three and a count of the rest.
func formatEndpoints(e *corev1.Endpoints) string {
	if len(e.Subsets) == 0 {
		return "<none>"
	}
	var list []string
	count := 0
	add := func(s string) {
		if len(list) < maxListed {
			list = append(list, s)
		}
	}
	for _, ss := range e.Subsets {
		if len(ss.Ports) == 0 {
			count += len(ss.Addresses)
			for _, a := range ss.Addresses {
				add(a.IP)
			}
			continue
		}
		for _, p := range ss.Ports {
			count += len(ss.Addresses)
			for _, a := range ss.Addresses {
				add(net.JoinHostPort(a.IP, strconv.Itoa(int(p.Port))))
			}
		}
	}
	out := strings.Join(list, ",")
	if count > maxListed {
		return fmt.Sprintf("%s + %d more...", out, count-maxListed)
	}
	return out
}

func endpointSliceCells(s *discoveryv1.EndpointSlice, now time.Time) []any {
	var ports, endpoints []string
	for _, p := range s.Ports {
		switch {
		case p.Port != nil:
			ports = append(ports, strconv.Itoa(int(*p.Port)))
		case p.Name != nil:
			ports = append(ports, *p.Name)
		default:
			ports = append(ports, "*")
		}
	}
	for _, e := range s.Endpoints {
		endpoints = append(endpoints, e.Addresses...)
	}
	return []any{s.Name, string(s.AddressType), listWithMore(ports), listWithMore(endpoints), printers.Age(s.CreationTimestamp, now)}
}

// listWithMore is kube's listWithMoreString: the first three, "+ N more...", or <unset>.
func listWithMore(list []string) string {
	if len(list) > maxListed {
		return fmt.Sprintf("%s + %d more...", strings.Join(list[:maxListed], ","), len(list)-maxListed)
	}
	if len(list) == 0 {
		return "<unset>"
	}
	return strings.Join(list, ",")
}
