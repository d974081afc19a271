package allocator

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/apictl/apictl/pkg/storage"
	"github.com/apictl/apictl/pkg/storage/embedded"
	"github.com/apictl/apictl/pkg/storage/etcd3"
)

// startEtcd runs an embedded etcd for the test and returns its client URLs.
func startEtcd(t *testing.T) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := embedded.Start(ctx, embedded.Config{Dir: t.TempDir(), UnsafeNoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close(context.Background()) })
	return srv.ClientURLs()
}

// newStore is a client of its own on endpoints, as each apictl replica has.
func newStore(t *testing.T, endpoints []string) storage.Store {
	t.Helper()
	s, err := etcd3.New(context.Background(), etcd3.Config{Endpoints: endpoints, Prefix: "/registry"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func cidrs(t *testing.T, s ...string) []*net.IPNet {
	t.Helper()
	var out []*net.IPNet
	for _, c := range s {
		_, n, err := net.ParseCIDR(c)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	return out
}

var defaultPorts = utilnet.PortRange{Base: 30000, Size: 2768}

func newAllocator(t *testing.T, store storage.Store, ranges ...string) *Allocator {
	t.Helper()
	a, err := New(store, Config{ServiceCIDRs: cidrs(t, ranges...), NodePorts: defaultPorts})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func service(name string, mutate ...func(*corev1.Service)) *corev1.Service {
	s := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{Kind: "Service", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Ports: []corev1.ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP}}},
	}
	for _, m := range mutate {
		m(s)
	}
	return s
}

func create(ctx context.Context, s storage.Store, svc *corev1.Service) (*corev1.Service, error) {
	value, err := json.Marshal(svc)
	if err != nil {
		return nil, err
	}
	kv, err := s.Create(ctx, storage.ObjectKey("", "services", svc.Namespace, svc.Name), value, 0)
	if err != nil {
		return nil, err
	}
	return decode(kv.Value)
}

func deleteService(ctx context.Context, s storage.Store, name string) error {
	_, err := s.Delete(ctx, storage.ObjectKey("", "services", "default", name), func(storage.KeyValue) error { return nil })
	return err
}

func update(ctx context.Context, s storage.Store, name string, mutate func(*corev1.Service)) (*corev1.Service, error) {
	kv, err := s.GuaranteedUpdate(ctx, storage.ObjectKey("", "services", "default", name), func(current storage.KeyValue) ([]byte, error) {
		svc, err := decode(current.Value)
		if err != nil {
			return nil, err
		}
		mutate(svc)
		return json.Marshal(svc)
	}, storage.UpdateOptions{})
	if err != nil {
		return nil, err
	}
	return decode(kv.Value)
}

// TestReplicasRace: two replicas, each with its own etcd client and allocator, create services at
// once from a /28 (14 usable addresses): every address goes to one service, the rest are refused as
// kube refuses a full range, and a deleted service's address can be had again.
func TestReplicasRace(t *testing.T) {
	endpoints := startEtcd(t)
	ctx := context.Background()
	var replicas []storage.Store
	for range 2 {
		raw := newStore(t, endpoints)
		replicas = append(replicas, newAllocator(t, raw, "10.96.0.0/28").Wrap(raw, nil))
	}
	const n = 20
	var mu sync.Mutex
	got := map[string]string{}
	full := 0
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			name := fmt.Sprintf("s%d", i)
			svc, err := create(ctx, replicas[i%2], service(name))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				if other, dup := got[svc.Spec.ClusterIP]; dup {
					t.Errorf("%s and %s both got %s", name, other, svc.Spec.ClusterIP)
				}
				got[svc.Spec.ClusterIP] = name
			case apierrors.IsInternalError(err) && strings.Contains(err.Error(), "range is full"):
				full++
			default:
				t.Errorf("creating %s: %v", name, err)
			}
		})
	}
	wg.Wait()
	if len(got) != 14 || full != n-14 {
		t.Fatalf("%d services got an address and %d were refused, want 14 and %d", len(got), full, n-14)
	}
	for ip := range got {
		if _, r, _ := net.ParseCIDR("10.96.0.0/28"); !r.Contains(net.ParseIP(ip)) || ip == "10.96.0.0" || ip == "10.96.0.15" {
			t.Errorf("allocated %s, outside the usable addresses of 10.96.0.0/28", ip)
		}
	}
	var freed string
	for ip, name := range got {
		freed = ip
		if err := deleteService(ctx, replicas[1], name); err != nil {
			t.Fatal(err)
		}
		break
	}
	svc, err := create(ctx, replicas[0], service("again"))
	if err != nil {
		t.Fatal(err)
	}
	if svc.Spec.ClusterIP != freed {
		t.Errorf("the new service got %s, want the freed %s", svc.Spec.ClusterIP, freed)
	}
}

// TestCreate: what a created service gets, and kube's refusals.
func TestCreate(t *testing.T) {
	endpoints := startEtcd(t)
	ctx := context.Background()
	raw := newStore(t, endpoints)
	s := newAllocator(t, raw, "10.0.0.0/24").Wrap(raw, nil)
	if _, err := create(ctx, s, service("first", func(s *corev1.Service) { s.Spec.ClusterIP, s.Spec.ClusterIPs = "10.0.0.10", []string{"10.0.0.10"} })); err != nil {
		t.Fatal(err)
	}
	single := corev1.IPFamilyPolicySingleStack
	requireDual := corev1.IPFamilyPolicyRequireDualStack
	for _, tc := range []struct {
		name    string
		svc     *corev1.Service
		wantErr string
		check   func(t *testing.T, s *corev1.Service)
	}{{
		name: "allocated", svc: service("a"),
		check: func(t *testing.T, s *corev1.Service) {
			if ip := net.ParseIP(s.Spec.ClusterIP); ip == nil || len(s.Spec.ClusterIPs) != 1 || s.Spec.ClusterIPs[0] != s.Spec.ClusterIP {
				t.Errorf("clusterIP %q, clusterIPs %q", s.Spec.ClusterIP, s.Spec.ClusterIPs)
			}
			if fmt.Sprint(s.Spec.IPFamilies) != "[IPv4]" || s.Spec.IPFamilyPolicy == nil || *s.Spec.IPFamilyPolicy != single {
				t.Errorf("ipFamilies %v, ipFamilyPolicy %v", s.Spec.IPFamilies, s.Spec.IPFamilyPolicy)
			}
		},
	}, {
		name: "taken", svc: service("b", func(s *corev1.Service) { s.Spec.ClusterIP, s.Spec.ClusterIPs = "10.0.0.10", []string{"10.0.0.10"} }),
		wantErr: `Service "b" is invalid: spec.clusterIPs: Invalid value: ["10.0.0.10"]: failed to allocate IP 10.0.0.10: provided IP is already allocated`,
	}, {
		name: "out of range", svc: service("c", func(s *corev1.Service) { s.Spec.ClusterIP, s.Spec.ClusterIPs = "10.99.0.5", []string{"10.99.0.5"} }),
		wantErr: `Service "c" is invalid: spec.clusterIPs: Invalid value: ["10.99.0.5"]: failed to allocate IP 10.99.0.5: the provided network does not match the current range`,
	}, {
		name: "broadcast", svc: service("d", func(s *corev1.Service) { s.Spec.ClusterIP, s.Spec.ClusterIPs = "10.0.0.255", []string{"10.0.0.255"} }),
		wantErr: `failed to allocate IP 10.0.0.255: the provided network does not match the current range`,
	}, {
		name: "dual-stack on a single-stack cluster", svc: service("e", func(s *corev1.Service) { s.Spec.IPFamilyPolicy = &requireDual }),
		wantErr: `Service "e" is invalid: spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services`,
	}, {
		name: "IPv6 not configured", svc: service("f", func(s *corev1.Service) { s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol} }),
		wantErr: `Service "f" is invalid: spec.ipFamilies[0]: Invalid value: "IPv6": not configured on this cluster`,
	}, {
		name: "headless", svc: service("g", func(s *corev1.Service) {
			s.Spec.ClusterIP, s.Spec.ClusterIPs = "None", []string{"None"}
			s.Spec.Selector = map[string]string{"a": "b"}
		}),
		check: func(t *testing.T, s *corev1.Service) {
			if fmt.Sprintf("%v %v %v", s.Spec.ClusterIPs, s.Spec.IPFamilies, *s.Spec.IPFamilyPolicy) != "[None] [IPv4] SingleStack" {
				t.Errorf("clusterIPs %v, ipFamilies %v, policy %v", s.Spec.ClusterIPs, s.Spec.IPFamilies, *s.Spec.IPFamilyPolicy)
			}
		},
	}, {
		name: "headless without selector", svc: service("h", func(s *corev1.Service) { s.Spec.ClusterIP, s.Spec.ClusterIPs = "None", []string{"None"} }),
		check: func(t *testing.T, s *corev1.Service) {
			if fmt.Sprintf("%v %v", s.Spec.IPFamilies, *s.Spec.IPFamilyPolicy) != "[IPv4 IPv6] RequireDualStack" {
				t.Errorf("ipFamilies %v, policy %v", s.Spec.IPFamilies, *s.Spec.IPFamilyPolicy)
			}
		},
	}, {
		name: "external name", svc: service("i", func(s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeExternalName
			s.Spec.ExternalName = "x.example.com"
		}),
		check: func(t *testing.T, s *corev1.Service) {
			if s.Spec.ClusterIP != "" || s.Spec.ClusterIPs != nil || s.Spec.IPFamilies != nil || s.Spec.IPFamilyPolicy != nil {
				t.Errorf("an ExternalName service got %q %q %v %v", s.Spec.ClusterIP, s.Spec.ClusterIPs, s.Spec.IPFamilies, s.Spec.IPFamilyPolicy)
			}
		},
	}, {
		name: "node port", svc: service("j", func(s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeNodePort
			s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Port: 80, Protocol: corev1.ProtocolUDP}, corev1.ServicePort{Port: 81, NodePort: 30001})
		}),
		check: func(t *testing.T, s *corev1.Service) {
			p := s.Spec.Ports
			if p[0].NodePort < 30000 || p[0].NodePort > 32767 || p[1].NodePort != p[0].NodePort || p[2].NodePort != 30001 {
				t.Errorf("node ports %d %d %d", p[0].NodePort, p[1].NodePort, p[2].NodePort)
			}
		},
	}, {
		name: "node port taken", svc: service("k", func(s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeNodePort
			s.Spec.Ports[0].NodePort = 30001
		}),
		wantErr: `Service "k" is invalid: spec.ports[0].nodePort: Invalid value: 30001: provided port is already allocated`,
	}, {
		name: "node port out of range", svc: service("l", func(s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeNodePort
			s.Spec.Ports[0].NodePort = 80
		}),
		wantErr: `Service "l" is invalid: spec.ports[0].nodePort: Invalid value: 80: provided port is not in the valid range. The range of valid ports is 30000-32767`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := create(ctx, s, tc.svc)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, got)
		})
	}
	// A refused create left nothing reserved: the IP it asked for is free.
	if _, err := create(ctx, s, service("m", func(s *corev1.Service) {
		s.Spec.Type = corev1.ServiceTypeNodePort
		s.Spec.ClusterIP, s.Spec.ClusterIPs = "10.0.0.11", []string{"10.0.0.11"}
		s.Spec.Ports[0].NodePort = 80 // refused after the IP was reserved
	})); err == nil {
		t.Fatal("a node port out of range was accepted")
	}
	if _, err := create(ctx, s, service("n", func(s *corev1.Service) { s.Spec.ClusterIP, s.Spec.ClusterIPs = "10.0.0.11", []string{"10.0.0.11"} })); err != nil {
		t.Errorf("the IP of a refused create stayed reserved: %v", err)
	}
}

// TestUpdate: a type change allocates what the new type needs and releases what the old one held.
func TestUpdate(t *testing.T) {
	endpoints := startEtcd(t)
	ctx := context.Background()
	raw := newStore(t, endpoints)
	s := newAllocator(t, raw, "10.0.0.0/24").Wrap(raw, nil)
	if _, err := create(ctx, s, service("a", func(s *corev1.Service) { s.Spec.ClusterIP, s.Spec.ClusterIPs = "10.0.0.20", []string{"10.0.0.20"} })); err != nil {
		t.Fatal(err)
	}
	np, err := update(ctx, s, "a", func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeNodePort })
	if err != nil {
		t.Fatal(err)
	}
	port := np.Spec.Ports[0].NodePort
	if port == 0 || np.Spec.ClusterIP != "10.0.0.20" {
		t.Fatalf("after the change to NodePort: node port %d, clusterIP %s", port, np.Spec.ClusterIP)
	}
	en, err := update(ctx, s, "a", func(s *corev1.Service) {
		s.Spec = corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "x.example.com", Ports: s.Spec.Ports}
		s.Spec.Ports[0].NodePort = 0
	})
	if err != nil {
		t.Fatal(err)
	}
	if en.Spec.ClusterIP != "" {
		t.Fatalf("ExternalName kept clusterIP %s", en.Spec.ClusterIP)
	}
	if _, err := create(ctx, s, service("b", func(s *corev1.Service) {
		s.Spec.ClusterIP, s.Spec.ClusterIPs = "10.0.0.20", []string{"10.0.0.20"}
		s.Spec.Type = corev1.ServiceTypeNodePort
		s.Spec.Ports[0].NodePort = port
	})); err != nil {
		t.Errorf("the released IP and node port are not free: %v", err)
	}
	back, err := update(ctx, s, "a", func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeClusterIP; s.Spec.ExternalName = "" })
	if err != nil {
		t.Fatal(err)
	}
	if back.Spec.ClusterIP == "" || back.Spec.ClusterIP == "10.0.0.20" {
		t.Errorf("back to ClusterIP: clusterIP %q", back.Spec.ClusterIP)
	}
}

// TestStaleReservation: a reservation whose service never came (its replica died between the two
// writes) is taken over once older than the grace period, not before.
func TestStaleReservation(t *testing.T) {
	endpoints := startEtcd(t)
	ctx := context.Background()
	raw := newStore(t, endpoints)
	now := time.Now()
	a, err := New(raw, Config{ServiceCIDRs: cidrs(t, "10.0.0.0/24"), NodePorts: defaultPorts, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	orphan, err := encodeReservation(ipKey("10.0.0.30"), owner{Namespace: "default", Name: "ghost", ReservedAt: now})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Create(ctx, ipKey("10.0.0.30"), orphan, 0); err != nil {
		t.Fatal(err)
	}
	s := a.Wrap(raw, nil)
	if _, err := create(ctx, s, service("a", func(s *corev1.Service) { s.Spec.ClusterIP, s.Spec.ClusterIPs = "10.0.0.30", []string{"10.0.0.30"} })); err == nil {
		t.Fatal("a fresh reservation was taken over")
	}
	now = now.Add(2 * DefaultGrace)
	if _, err := create(ctx, s, service("a", func(s *corev1.Service) { s.Spec.ClusterIP, s.Spec.ClusterIPs = "10.0.0.30", []string{"10.0.0.30"} })); err != nil {
		t.Fatalf("a stale reservation was not taken over: %v", err)
	}
}

func TestRanges(t *testing.T) {
	for _, tc := range []struct {
		cidr        string
		size, off   uint64
		first, last string
		outside     []string
	}{
		{cidr: "10.0.0.0/24", size: 254, off: 16, first: "10.0.0.1", last: "10.0.0.254", outside: []string{"10.0.0.0", "10.0.0.255", "10.0.1.1"}},
		{cidr: "10.96.0.0/12", size: 1<<20 - 2, off: 256, first: "10.96.0.1", last: "10.111.255.254", outside: []string{"10.112.0.0"}},
		{cidr: "10.0.0.0/28", size: 14, off: 0, first: "10.0.0.1", last: "10.0.0.14"},
		{cidr: "fd00::/120", size: 255, off: 16, first: "fd00::1", last: "fd00::ff", outside: []string{"fd00::"}},
	} {
		t.Run(tc.cidr, func(t *testing.T) {
			r, err := newIPRange(cidrs(t, tc.cidr)[0])
			if err != nil {
				t.Fatal(err)
			}
			if r.size != tc.size || r.dynamicOffset() != tc.off {
				t.Errorf("size %d, offset %d; want %d, %d", r.size, r.dynamicOffset(), tc.size, tc.off)
			}
			if got := r.at(0).String(); got != tc.first {
				t.Errorf("first %s, want %s", got, tc.first)
			}
			if got := r.at(r.size - 1).String(); got != tc.last {
				t.Errorf("last %s, want %s", got, tc.last)
			}
			for _, ip := range tc.outside {
				if _, ok := r.offset(mustAddr(t, ip)); ok {
					t.Errorf("%s is usable", ip)
				}
			}
			if i, ok := r.offset(mustAddr(t, tc.last)); !ok || i != r.size-1 {
				t.Errorf("offset of %s = %d %v", tc.last, i, ok)
			}
		})
	}
}

func mustAddr(t *testing.T, s string) netip.Addr {
	t.Helper()
	a, err := netip.ParseAddr(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
