package registry

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestWarnings pins kube's strategy warnings (WarningsOnCreate, WarningsOnUpdate) in its words and
// order; the first two are checked against kube-apiserver v1.37.2 by the differential corpus.
func TestWarnings(t *testing.T) {
	svc := func(spec corev1.ServiceSpec) *corev1.Service {
		return &corev1.Service{ObjectMeta: om("s"), Spec: spec}
	}
	slice := func(t discoveryv1.AddressType, addrs ...string) *discoveryv1.EndpointSlice {
		return &discoveryv1.EndpointSlice{ObjectMeta: om("e"), AddressType: t, Endpoints: []discoveryv1.Endpoint{{Addresses: addrs}}}
	}
	preferClose := corev1.ServiceTrafficDistributionPreferClose
	for _, tc := range []struct {
		name, group, resource string
		obj                   runtime.Object
		update                bool
		want                  []string
	}{
		{name: "external IPs", resource: "services", obj: svc(corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, ExternalIPs: []string{"192.0.2.10"}}),
			want: []string{"spec.externalIPs is deprecated and may no longer be implemented in some clusters"}},
		{name: "FQDN slice", group: "discovery.k8s.io", resource: "endpointslices", obj: slice(discoveryv1.AddressTypeFQDN, "a.example.com"),
			want: []string{"spec.addressType: FQDN endpoints are deprecated"}},
		{name: "FQDN slice update", group: "discovery.k8s.io", resource: "endpointslices", obj: slice(discoveryv1.AddressTypeFQDN, "a.example.com"), update: true},
		{name: "slice address with leading zeros", group: "discovery.k8s.io", resource: "endpointslices", obj: slice(discoveryv1.AddressTypeIPv4, "010.0.0.1"), update: true,
			want: []string{`endpoints[0].addresses[0]: non-standard IP address "010.0.0.1" is invalid: use "10.0.0.1"`}},
		{name: "headless", resource: "services", obj: svc(corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: corev1.ClusterIPNone,
			ExternalIPs: []string{"192.0.2.10"}, SessionAffinity: corev1.ServiceAffinityClientIP}),
			want: []string{"spec.externalIPs is ignored for headless services", "spec.SessionAffinity is ignored for headless services"}},
		{name: "external name", resource: "services", obj: svc(corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "db.example.com",
			ExternalIPs: []string{"192.0.2.10"}}),
			want: []string{`spec.externalIPs is ignored when spec.type is "ExternalName"`}},
		{name: "PreferClose", resource: "services", update: true, obj: svc(corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, TrafficDistribution: &preferClose}),
			want: []string{`spec.trafficDistribution: "PreferClose" is deprecated; use "PreferSameZone"`}},
		{name: "plain", resource: "services", obj: svc(corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP})},
		{name: "a kind without warnings", resource: "configmaps", obj: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := strategy(t, tc.group, tc.resource)
			var got []string
			if tc.update {
				got = s.WarningsOnUpdate(tc.obj, tc.obj)
			} else {
				got = s.WarningsOnCreate(tc.obj)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("warnings %q, want %q", got, tc.want)
			}
		})
	}
	var none *Strategy
	if got := none.WarningsOnCreate(&corev1.ConfigMap{}); got != nil {
		t.Errorf("a nil Strategy warns %q", got)
	}
}
