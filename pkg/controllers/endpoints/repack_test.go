//lint:file-ignore SA1019 core v1 Endpoints are deprecated in kube, which still serves them and keeps them with its controllers: so does apictl.

package endpoints

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

func TestRepackSubsets(t *testing.T) {
	p80 := corev1.EndpointPort{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}
	p443 := corev1.EndpointPort{Name: "https", Port: 443, Protocol: corev1.ProtocolTCP}
	addr := func(ips ...string) []corev1.EndpointAddress {
		var out []corev1.EndpointAddress
		for _, ip := range ips {
			out = append(out, corev1.EndpointAddress{IP: ip})
		}
		return out
	}
	tests := []struct {
		name string
		in   []corev1.EndpointSubset
		want []corev1.EndpointSubset
	}{
		{"empty", nil, []corev1.EndpointSubset{}},
		{"ports without addresses vanish", []corev1.EndpointSubset{{Ports: []corev1.EndpointPort{p80}}}, []corev1.EndpointSubset{}},
		{"sorted and deduplicated",
			[]corev1.EndpointSubset{{Addresses: addr("10.0.0.2", "10.0.0.1", "10.0.0.2"), Ports: []corev1.EndpointPort{p80}}},
			[]corev1.EndpointSubset{{Addresses: addr("10.0.0.1", "10.0.0.2"), Ports: []corev1.EndpointPort{p80}}}},
		{"not ready trumps ready",
			[]corev1.EndpointSubset{{Addresses: addr("10.0.0.1", "10.0.0.2"), NotReadyAddresses: addr("10.0.0.1", "10.0.0.3"), Ports: []corev1.EndpointPort{p80}}},
			[]corev1.EndpointSubset{{Addresses: addr("10.0.0.2"), NotReadyAddresses: addr("10.0.0.1", "10.0.0.3"), Ports: []corev1.EndpointPort{p80}}}},
		{"same addresses share a subset",
			[]corev1.EndpointSubset{{Addresses: addr("10.0.0.1"), Ports: []corev1.EndpointPort{p80}}, {Addresses: addr("10.0.0.1"), Ports: []corev1.EndpointPort{p443}}},
			[]corev1.EndpointSubset{{Addresses: addr("10.0.0.1"), Ports: SortSubsets([]corev1.EndpointSubset{{Ports: []corev1.EndpointPort{p443, p80}}})[0].Ports}}},
		{"headless keeps addresses without ports",
			[]corev1.EndpointSubset{{Addresses: addr("10.0.0.1")}},
			[]corev1.EndpointSubset{{Addresses: addr("10.0.0.1")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RepackSubsets(tt.in); !equality.Semantic.DeepEqual(got, tt.want) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}
