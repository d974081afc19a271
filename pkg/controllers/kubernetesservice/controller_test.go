//lint:file-ignore SA1019 core v1 Endpoints are deprecated in kube, which still serves them and keeps them with its controllers: so does apictl.

package kubernetesservice

import (
	"context"
	"io"
	"log/slog"
	"net"
	"slices"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// memLeases are Leases in memory, shared by the replicas of a test.
type memLeases struct {
	mu  sync.Mutex
	ips []string
}

func (m *memLeases) List(context.Context) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.ips), nil
}

func (m *memLeases) Update(_ context.Context, ip string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !slices.Contains(m.ips, ip) {
		m.ips = append(m.ips, ip)
	}
	return nil
}

func (m *memLeases) Remove(_ context.Context, ip string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ips = slices.DeleteFunc(m.ips, func(s string) bool { return s == ip })
	return nil
}

func newController(t *testing.T, client *fake.Clientset, leases Leases, ip string) *Controller {
	t.Helper()
	c, err := New(Config{Client: client, Leases: leases, PublicIP: net.ParseIP(ip), ServiceIP: net.ParseIP("10.0.0.1"),
		PublicServicePort: 6443, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// addresses returns the Endpoints' and the EndpointSlice's addresses ("" and nil when missing).
func addresses(t *testing.T, client *fake.Clientset) (eps, slice []string) {
	t.Helper()
	ctx := context.Background()
	e, err := client.CoreV1().Endpoints("default").Get(ctx, Name, metav1.GetOptions{})
	if err == nil {
		for _, s := range e.Subsets {
			for _, a := range s.Addresses {
				eps = append(eps, a.IP)
			}
		}
		if e.Labels[discoveryv1.LabelSkipMirror] != "true" {
			t.Errorf("the Endpoints lack the skip-mirror label: %v", e.Labels)
		}
	} else if !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	s, err := client.DiscoveryV1().EndpointSlices("default").Get(ctx, Name, metav1.GetOptions{})
	if err == nil {
		for _, ep := range s.Endpoints {
			slice = append(slice, ep.Addresses...)
		}
	} else if !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return eps, slice
}

func TestReplicasShareTheEndpoints(t *testing.T) {
	ctx := context.Background()
	client := fake.NewClientset()
	leases := &memLeases{}
	a, b := newController(t, client, leases, "10.1.0.2"), newController(t, client, leases, "10.1.0.1")
	for _, c := range []*Controller{a, b, a} {
		if err := c.Sync(ctx); err != nil {
			t.Fatal(err)
		}
	}
	svc, err := client.CoreV1().Services("default").Get(ctx, Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := Service(net.ParseIP("10.0.0.1"), 6443); !equality.Semantic.DeepEqual(svc.Spec, want.Spec) || !equality.Semantic.DeepEqual(svc.Labels, want.Labels) {
		t.Errorf("the Service is\n%+v\nwant\n%+v", svc, want)
	}
	if got := svc.Spec.Ports[0]; got.Name != "https" || got.Port != 443 || got.TargetPort.IntValue() != 6443 {
		t.Errorf("port %+v, want https 443 -> 6443", got)
	}
	eps, slice := addresses(t, client)
	if want := []string{"10.1.0.1", "10.1.0.2"}; !slices.Equal(eps, want) || !slices.Equal(slice, want) {
		t.Errorf("endpoints %v, slice %v; want %v in both", eps, slice, want)
	}

	if err := a.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	// A stopped replica renews nothing.
	if err := a.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	eps, slice = addresses(t, client)
	if want := []string{"10.1.0.1"}; !slices.Equal(eps, want) || !slices.Equal(slice, want) {
		t.Errorf("after a replica stopped: endpoints %v, slice %v; want %v in both", eps, slice, want)
	}
	// The last one out leaves the Endpoints empty.
	if err := b.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if eps, slice = addresses(t, client); len(eps) != 0 || len(slice) != 0 {
		t.Errorf("after every replica stopped: endpoints %v, slice %v; want none", eps, slice)
	}
}

// A replica whose address may not be an endpoint keeps the Service and writes no endpoints, as
// kube-apiserver on a loopback address with --endpoint-reconciler-type none.
func TestNoEndpointsForAnAddressEndpointsRefuse(t *testing.T) {
	for _, ip := range []string{"127.0.0.1", "::1", "169.254.1.1", ""} {
		t.Run(ip, func(t *testing.T) {
			ctx := context.Background()
			client := fake.NewClientset()
			leases := &memLeases{}
			c := newController(t, client, leases, ip)
			if err := c.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := client.CoreV1().Services("default").Get(ctx, Name, metav1.GetOptions{}); err != nil {
				t.Errorf("no Service: %v", err)
			}
			if eps, slice := addresses(t, client); eps != nil || slice != nil {
				t.Errorf("endpoints %v, slice %v; want none", eps, slice)
			}
			if ips, _ := leases.List(ctx); len(ips) != 0 {
				t.Errorf("leases %v; want none", ips)
			}
			if err := c.Stop(ctx); err != nil {
				t.Error(err)
			}
		})
	}
}

// An existing Service is left as it is (kube stopped reconciling it in 1.17).
func TestExistingServiceKept(t *testing.T) {
	ctx := context.Background()
	mine := Service(net.ParseIP("10.0.0.1"), 1234)
	mine.Labels["extra"] = "x"
	client := fake.NewClientset(mine)
	c := newController(t, client, &memLeases{}, "10.1.0.1")
	if err := c.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	svc, err := client.CoreV1().Services("default").Get(ctx, Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if svc.Labels["extra"] != "x" || svc.Spec.Ports[0].TargetPort.IntValue() != 1234 {
		t.Errorf("the existing Service was changed: %+v", svc)
	}
}

func TestSliceFromEndpoints(t *testing.T) {
	port := corev1.EndpointPort{Name: "https", Port: 6443, Protocol: corev1.ProtocolTCP}
	tests := []struct {
		name     string
		subsets  []corev1.EndpointSubset
		wantType discoveryv1.AddressType
		want     []string
	}{
		{"none", nil, discoveryv1.AddressTypeIPv4, nil},
		{"ipv4", []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "10.0.0.2"}}, Ports: []corev1.EndpointPort{port}}},
			discoveryv1.AddressTypeIPv4, []string{"10.0.0.2"}},
		{"ipv6", []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "fd00::2"}}, Ports: []corev1.EndpointPort{port}}},
			discoveryv1.AddressTypeIPv6, []string{"fd00::2"}},
		{"mixed keeps IPv4", []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "fd00::2"}, {IP: "10.0.0.2"}}, Ports: []corev1.EndpointPort{port}}},
			discoveryv1.AddressTypeIPv4, []string{"10.0.0.2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := SliceFromEndpoints(&corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: Name, Namespace: "default"}, Subsets: tt.subsets})
			var got []string
			for _, ep := range s.Endpoints {
				got = append(got, ep.Addresses...)
			}
			if s.AddressType != tt.wantType || !slices.Equal(got, tt.want) || s.Labels[discoveryv1.LabelServiceName] != Name {
				t.Errorf("got %s %v %v; want %s %v", s.AddressType, got, s.Labels, tt.wantType, tt.want)
			}
		})
	}
}
