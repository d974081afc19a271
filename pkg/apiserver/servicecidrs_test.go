package apiserver_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apictl/apictl/internal/servertest"
)

// TestServiceCIDRsAndIPAddresses: a server started on a data set of the old allocator migrates its
// cluster IPs to IPAddresses; the default ServiceCIDR is made from the flag and Ready; a service's
// cluster IP is an IPAddress with kube's labels and parentRef, released with it; an IPAddress made by
// hand blocks its address.
func TestServiceCIDRsAndIPAddresses(t *testing.T) {
	etcd, raw := etcdForTest(t)
	ctx := context.Background()
	// What the old allocator left: a reservation of 10.96.0.7 for a service that is gone.
	if _, err := raw.Put(ctx, "/registry/ranges/serviceips/10.96.0.7",
		`{"namespace":"default","name":"old","uid":"u","reservedAt":"2026-01-01T00:00:00Z"}`); err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(servertest.Start(t, "--etcd-servers", etcd, "--service-cluster-ip-range", "10.96.0.0/24").AdminConfig)

	if resp, err := raw.Get(ctx, "/registry/ranges/serviceips/", clientv3.WithPrefix()); err != nil || len(resp.Kvs) != 0 {
		t.Errorf("old reservations left after the start: %v, %d", err, len(resp.Kvs))
	}
	migrated, err := cs.NetworkingV1().IPAddresses().Get(ctx, "10.96.0.7", metav1.GetOptions{})
	if err != nil || migrated.Spec.ParentRef == nil || migrated.Spec.ParentRef.Name != "old" {
		t.Fatalf("the migrated IPAddress: %+v, %v", migrated, err)
	}

	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		c, err := cs.NetworkingV1().ServiceCIDRs().Get(ctx, "kubernetes", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		return strings.Join(c.Spec.CIDRs, ",") == "10.96.0.0/24" &&
			apimeta.IsStatusConditionTrue(c.Status.Conditions, networkingv1.ServiceCIDRConditionReady), nil
	})
	if err != nil {
		t.Fatalf("the default ServiceCIDR is not there and Ready: %v", err)
	}

	svc, err := cs.CoreV1().Services("default").Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ip, err := cs.NetworkingV1().IPAddresses().Get(ctx, svc.Spec.ClusterIP, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the service's IPAddress: %v", err)
	}
	wantRef := networkingv1.ParentReference{Resource: "services", Namespace: "default", Name: "web"}
	if ip.Labels["ipaddress.kubernetes.io/ip-family"] != "IPv4" || ip.Labels["ipaddress.kubernetes.io/managed-by"] != "ipallocator.k8s.io" ||
		ip.Spec.ParentRef == nil || *ip.Spec.ParentRef != wantRef {
		t.Errorf("IPAddress labels %v parentRef %+v", ip.Labels, ip.Spec.ParentRef)
	}
	if err := cs.CoreV1().Services("default").Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.NetworkingV1().IPAddresses().Get(ctx, svc.Spec.ClusterIP, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the IPAddress of a deleted service: %v", err)
	}

	_, err = cs.NetworkingV1().IPAddresses().Create(ctx, &networkingv1.IPAddress{ObjectMeta: metav1.ObjectMeta{Name: "10.96.0.50"},
		Spec: networkingv1.IPAddressSpec{ParentRef: &networkingv1.ParentReference{Group: "example.com", Resource: "things", Name: "t"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = cs.CoreV1().Services("default").Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "taken"},
		Spec: corev1.ServiceSpec{ClusterIP: "10.96.0.50", Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "provided IP is already allocated") {
		t.Errorf("a service asking for a hand-made IPAddress's address: %v", err)
	}
}
