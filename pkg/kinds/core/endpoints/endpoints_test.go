//lint:file-ignore SA1019 core v1 Endpoints are deprecated in kube, which still serves them: so does apictl.

package endpoints

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestFormatEndpoints pins kube's Endpoints column: host:port per address and port, bare addresses
// without ports, three at most and a count of the rest.
func TestFormatEndpoints(t *testing.T) {
	addrs := func(ips ...string) []corev1.EndpointAddress {
		out := make([]corev1.EndpointAddress, len(ips))
		for i, ip := range ips {
			out[i].IP = ip
		}
		return out
	}
	tests := []struct {
		name    string
		subsets []corev1.EndpointSubset
		want    string
	}{
		{"none", nil, "<none>"},
		{"bare addresses", []corev1.EndpointSubset{{Addresses: addrs("10.1.0.1", "10.1.0.2")}}, "10.1.0.1,10.1.0.2"},
		{"ports", []corev1.EndpointSubset{{Addresses: addrs("10.1.0.1"), Ports: []corev1.EndpointPort{{Port: 80}, {Port: 443}}}}, "10.1.0.1:80,10.1.0.1:443"},
		{"IPv6", []corev1.EndpointSubset{{Addresses: addrs("fd00::1"), Ports: []corev1.EndpointPort{{Port: 80}}}}, "[fd00::1]:80"},
		{"more than three", []corev1.EndpointSubset{{Addresses: addrs("10.1.0.1", "10.1.0.2"), Ports: []corev1.EndpointPort{{Port: 80}, {Port: 81}}}},
			"10.1.0.1:80,10.1.0.2:80,10.1.0.1:81 + 1 more..."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := formatEndpoints(&corev1.Endpoints{Subsets: tt.subsets}); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestWarnings: addresses in a legacy form are warned about, unless kube's own controller wrote them.
func TestWarnings(t *testing.T) {
	e := &corev1.Endpoints{Subsets: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "010.001.000.001"}}}}}
	if w := (strategy{}).WarningsOnCreate(e); len(w) != 1 {
		t.Errorf("warnings %q, want one about the leading zeros", w)
	}
	e.Labels = map[string]string{managedBy: controller}
	if w := (strategy{}).WarningsOnCreate(e); len(w) != 0 {
		t.Errorf("warnings %q for the controller's Endpoints, want none", w)
	}
}
