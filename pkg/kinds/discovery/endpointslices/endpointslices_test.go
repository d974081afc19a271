package endpointslices

import (
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestCells pins kube's printEndpointSlice: ports by number, name or "*", addresses, three at most,
// and <unset> for none.
func TestCells(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name             string
		slice            discoveryv1.EndpointSlice
		ports, endpoints string
	}{
		{"empty", discoveryv1.EndpointSlice{AddressType: discoveryv1.AddressTypeIPv4}, "<unset>", "<unset>"},
		{"named and numbered ports", discoveryv1.EndpointSlice{AddressType: discoveryv1.AddressTypeIPv4,
			Ports:     []discoveryv1.EndpointPort{{Port: ptr.To[int32](80)}, {Name: ptr.To("dns")}, {}},
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.1.0.1"}}}}, "80,dns,*", "10.1.0.1"},
		{"more than three", discoveryv1.EndpointSlice{AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.1.0.1", "10.1.0.2"}}, {Addresses: []string{"10.1.0.3", "10.1.0.4", "10.1.0.5"}}}},
			"<unset>", "10.1.0.1,10.1.0.2,10.1.0.3 + 2 more..."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.slice.ObjectMeta = metav1.ObjectMeta{Name: "s", CreationTimestamp: metav1.NewTime(now.Add(-time.Hour))}
			got := cells(&tt.slice, now)
			want := []any{"s", "IPv4", tt.ports, tt.endpoints, "60m"}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("cell %d = %v, want %v", i, got[i], want[i])
				}
			}
		})
	}
}

// TestWarningsOnCreate: an FQDN slice is deprecated, and its addresses are not read as IPs.
func TestWarningsOnCreate(t *testing.T) {
	fqdn := &discoveryv1.EndpointSlice{AddressType: discoveryv1.AddressTypeFQDN, Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"a.example.com"}}}}
	if w := (strategy{}).WarningsOnCreate(fqdn); len(w) != 1 || w[0] != "spec.addressType: FQDN endpoints are deprecated" {
		t.Errorf("warnings %q", w)
	}
	legacy := &discoveryv1.EndpointSlice{AddressType: discoveryv1.AddressTypeIPv4, Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"010.001.000.001"}}}}
	if w := (strategy{}).WarningsOnCreate(legacy); len(w) != 1 {
		t.Errorf("warnings %q, want one about the leading zeros", w)
	}
}
