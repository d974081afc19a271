package apiserver_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/apictl/apictl/internal/servertest"
)

// TestServiceIPsAcrossReplicas: two replicas on one etcd hand out the 13 addresses of a /28 that the
// kubernetes Service leaves (it has 10.96.0.1) to services created through both at once, each address
// once; the rest are refused as kube refuses a full range; a deleted service's address and node port
// go to the next service that asks; a watch of services sees the writes.
func TestServiceIPsAcrossReplicas(t *testing.T) {
	etcd, _ := etcdForTest(t)
	args := []string{"--etcd-servers", etcd, "--service-cluster-ip-range", "10.96.0.0/28"}
	clients := []kubernetes.Interface{
		kubernetes.NewForConfigOrDie(servertest.Start(t, args...).AdminConfig),
		kubernetes.NewForConfigOrDie(servertest.Start(t, args...).AdminConfig),
	}
	ctx := context.Background()
	eventually(t, "the kubernetes Service takes the range's first address", func() error {
		svc, err := clients[0].CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
		if err == nil && svc.Spec.ClusterIP != "10.96.0.1" {
			err = fmt.Errorf("it has %s", svc.Spec.ClusterIP)
		}
		return err
	})
	const free = 13
	w, err := clients[1].CoreV1().Services("default").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	const n = 18
	var mu sync.Mutex
	owner := map[string]string{}
	full := 0
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("s%d", i)},
				Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
			got, err := clients[i%2].CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				if other, dup := owner[got.Spec.ClusterIP]; dup {
					t.Errorf("%s and %s both got %s", svc.Name, other, got.Spec.ClusterIP)
				}
				owner[got.Spec.ClusterIP] = svc.Name
			case apierrors.IsInternalError(err) && strings.Contains(err.Error(), "range is full"):
				full++
			default:
				t.Errorf("creating %s: %v", svc.Name, err)
			}
		})
	}
	wg.Wait()
	if len(owner) != free || full != n-free {
		t.Fatalf("%d services got an address, %d were refused; want %d and %d", len(owner), full, free, n-free)
	}
	_, cidr, _ := net.ParseCIDR("10.96.0.0/28")
	for ip := range owner {
		if !cidr.Contains(net.ParseIP(ip)) || ip == "10.96.0.0" || ip == "10.96.0.1" || ip == "10.96.0.15" {
			t.Errorf("allocated %s", ip)
		}
	}
	added := 0
	for added < free {
		select {
		case e := <-w.ResultChan():
			if e.Type == watch.Added {
				added++
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("the watch saw %d of %d creates", added, free)
		}
	}

	var freed, name string
	for freed, name = range owner {
		break
	}
	if err := clients[0].CoreV1().Services("default").Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	again, err := clients[1].CoreV1().Services("default").Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "again"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Port: 80, NodePort: 30123}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if again.Spec.ClusterIP != freed || again.Spec.Ports[0].NodePort != 30123 {
		t.Errorf("the new service got %s and node port %d, want the freed %s and 30123", again.Spec.ClusterIP, again.Spec.Ports[0].NodePort, freed)
	}
	for _, other := range owner {
		if other != name {
			if err := clients[1].CoreV1().Services("default").Delete(ctx, other, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	_, err = clients[0].CoreV1().Services("default").Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "clash"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Port: 80, NodePort: 30123}}}}, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.ports[0].nodePort: Invalid value: 30123: provided port is already allocated") {
		t.Errorf("a taken node port: %v", err)
	}
}

// TestServiceClusterIPRangeFlag: a bad range is refused before anything starts.
func TestServiceClusterIPRangeFlag(t *testing.T) {
	for _, tt := range []struct{ value, want string }{
		{"10.0.0.0", "--service-cluster-ip-range 10.0.0.0 has an entry (0) that is not a valid CIDR"},
		{"10.0.0.0/24,10.1.0.0/24", "has two ranges of the same IP family"},
		{"10.0.0.0/24,fd00::/112,10.2.0.0/24", "must not contain more than two entries"},
	} {
		t.Run(tt.value, func(t *testing.T) {
			_, err := servertest.StartE(context.Background(), t.TempDir(), "--service-cluster-ip-range", tt.value)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
}
