package allocator

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apictl/apictl/pkg/storage"
)

func getIPAddress(t *testing.T, s storage.Store, ip string) (*networkingv1.IPAddress, bool) {
	t.Helper()
	kv, err := s.Get(context.Background(), ipKey(ip), storage.GetOptions{})
	if storage.IsNotFound(err) {
		return nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	var out networkingv1.IPAddress
	if err := json.Unmarshal(kv.Value, &out); err != nil {
		t.Fatal(err)
	}
	return &out, true
}

func putServiceCIDR(t *testing.T, s storage.Store, name string, deleting bool, cidrs ...string) {
	t.Helper()
	c := networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: networkingv1.ServiceCIDRSpec{CIDRs: cidrs}}
	if deleting {
		now := metav1.Now()
		c.DeletionTimestamp = &now
	}
	value, _ := json.Marshal(c)
	if _, err := s.Create(context.Background(), storage.ObjectKey(networkingv1.GroupName, "servicecidrs", "", name), value, 0); err != nil {
		t.Fatal(err)
	}
}

// TestIPAddresses: every cluster IP is an IPAddress with kube's labels and parentRef, released with
// its service; one made by hand blocks its address.
func TestIPAddresses(t *testing.T) {
	ctx := context.Background()
	raw := newStore(t, startEtcd(t))
	s := newAllocator(t, raw, "10.0.0.0/24", "fd00::/120").Wrap(raw, nil)
	svc, err := create(ctx, s, service("a", func(s *corev1.Service) {
		p := corev1.IPFamilyPolicyRequireDualStack
		s.Spec.IPFamilyPolicy = &p
	}))
	if err != nil {
		t.Fatal(err)
	}
	for i, fam := range []string{"IPv4", "IPv6"} {
		ip, ok := getIPAddress(t, raw, svc.Spec.ClusterIPs[i])
		if !ok {
			t.Fatalf("no IPAddress for %s", svc.Spec.ClusterIPs[i])
		}
		want := networkingv1.ParentReference{Resource: "services", Namespace: "default", Name: "a"}
		if ip.Labels[networkingv1.LabelIPAddressFamily] != fam || ip.Labels[networkingv1.LabelManagedBy] != "ipallocator.k8s.io" ||
			ip.Spec.ParentRef == nil || *ip.Spec.ParentRef != want || ip.UID == "" || ip.CreationTimestamp.IsZero() {
			t.Errorf("IPAddress %s: labels %v parentRef %+v uid %q", ip.Name, ip.Labels, ip.Spec.ParentRef, ip.UID)
		}
	}
	if err := deleteService(ctx, s, "a"); err != nil {
		t.Fatal(err)
	}
	for _, addr := range svc.Spec.ClusterIPs {
		if _, ok := getIPAddress(t, raw, addr); ok {
			t.Errorf("the IPAddress %s outlived its service", addr)
		}
	}

	byHand, _ := json.Marshal(networkingv1.IPAddress{ObjectMeta: metav1.ObjectMeta{Name: "10.0.0.40"},
		Spec: networkingv1.IPAddressSpec{ParentRef: &networkingv1.ParentReference{Group: "x.io", Resource: "things", Name: "t"}}})
	if _, err := raw.Create(ctx, ipKey("10.0.0.40"), byHand, 0); err != nil {
		t.Fatal(err)
	}
	_, err = create(ctx, s, service("b", func(s *corev1.Service) { s.Spec.ClusterIP, s.Spec.ClusterIPs = "10.0.0.40", []string{"10.0.0.40"} }))
	if err == nil || !strings.Contains(err.Error(), "provided IP is already allocated") {
		t.Errorf("a hand-made IPAddress's address was given to a service: %v", err)
	}
}

// TestServiceCIDRs: a ServiceCIDR widens the range; one being deleted, or not Ready, does not; the
// flag's range serves while no ServiceCIDR of the family exists.
func TestServiceCIDRs(t *testing.T) {
	ctx := context.Background()
	raw := newStore(t, startEtcd(t))
	s := newAllocator(t, raw, "10.0.0.0/24").Wrap(raw, nil)
	at := func(name, ip string) error {
		_, err := create(ctx, s, service(name, func(s *corev1.Service) { s.Spec.ClusterIP, s.Spec.ClusterIPs = ip, []string{ip} }))
		return err
	}
	if err := at("before", "10.0.0.5"); err != nil {
		t.Fatalf("the flag's range before any ServiceCIDR: %v", err)
	}
	if err := at("outside", "10.1.0.5"); err == nil || !strings.Contains(err.Error(), "does not match the current range") {
		t.Fatalf("an address outside every range: %v", err)
	}
	putServiceCIDR(t, raw, "kubernetes", false, "10.0.0.0/24")
	putServiceCIDR(t, raw, "extra", false, "10.1.0.0/24")
	putServiceCIDR(t, raw, "going", true, "10.2.0.0/24")
	if err := at("widened", "10.1.0.5"); err != nil {
		t.Errorf("an address of a user's ServiceCIDR: %v", err)
	}
	if err := at("deleting", "10.2.0.5"); err == nil {
		t.Error("an address of a ServiceCIDR being deleted was allocated")
	}
}

// TestMigrate: the old allocator's keys become IPAddresses and go; a service's cluster IP without
// either gets one; a second run changes nothing.
func TestMigrate(t *testing.T) {
	ctx := context.Background()
	raw := newStore(t, startEtcd(t))
	reserved := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	old, _ := json.Marshal(owner{Namespace: "default", Name: "old", UID: "uid-old", ReservedAt: reserved})
	if _, err := raw.Create(ctx, legacyIPPrefix+"10.0.0.7", old, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := create(ctx, raw, service("restored", func(s *corev1.Service) { s.Spec.ClusterIP, s.Spec.ClusterIPs = "10.0.0.8", []string{"10.0.0.8"} })); err != nil {
		t.Fatal(err)
	}
	a := newAllocator(t, raw, "10.0.0.0/24")
	res, err := a.Migrate(ctx)
	if err != nil || res != (MigrateResult{Moved: 1, Made: 1}) {
		t.Fatalf("Migrate = %+v, %v; want 1 moved, 1 made", res, err)
	}
	ip, ok := getIPAddress(t, raw, "10.0.0.7")
	if !ok || ip.Spec.ParentRef.Name != "old" || !ip.CreationTimestamp.Time.Equal(reserved) {
		t.Errorf("the migrated IPAddress: %+v", ip)
	}
	if _, ok := getIPAddress(t, raw, "10.0.0.8"); !ok {
		t.Error("the service's cluster IP has no IPAddress")
	}
	if _, err := raw.Get(ctx, legacyIPPrefix+"10.0.0.7", storage.GetOptions{}); !storage.IsNotFound(err) {
		t.Errorf("the old key is still there: %v", err)
	}
	if res, err := a.Migrate(ctx); err != nil || res != (MigrateResult{}) {
		t.Errorf("a second Migrate = %+v, %v; want nothing done", res, err)
	}
	// The old reservation, whose service is gone, is reclaimed as before once stale.
	if _, err := create(ctx, a.Wrap(raw, nil), service("new", func(s *corev1.Service) { s.Spec.ClusterIP, s.Spec.ClusterIPs = "10.0.0.7", []string{"10.0.0.7"} })); err != nil {
		t.Errorf("the stale migrated reservation was not taken over: %v", err)
	}
}
