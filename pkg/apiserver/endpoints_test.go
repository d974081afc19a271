//lint:file-ignore SA1019 core v1 Endpoints are deprecated in kube, which still serves them and keeps them with its controllers: so does apictl.

package apiserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/apictl/apictl/internal/servertest"
)

// TestKubernetesServiceOnLoopback: a server on loopback keeps the default/kubernetes Service as
// kube-apiserver creates it, and no endpoints for it (kube refuses loopback addresses there).
func TestKubernetesServiceOnLoopback(t *testing.T) {
	s := servertest.Start(t)
	cs := kubernetes.NewForConfigOrDie(s.AdminConfig)
	ctx := context.Background()
	var svc *corev1.Service
	eventually(t, "the kubernetes Service exists", func() (err error) {
		svc, err = cs.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
		return err
	})
	singleStack := corev1.IPFamilyPolicySingleStack
	cluster := corev1.ServiceInternalTrafficPolicyCluster
	// What kube-apiserver v1.37.2 stores, with --secure-port as the target port.
	want := corev1.ServiceSpec{
		Ports: []corev1.ServicePort{{Name: "https", Protocol: corev1.ProtocolTCP, Port: 443,
			TargetPort: intstr.FromInt32(int32(s.Options.SecureServing.BindPort))}},
		ClusterIP: "10.0.0.1", ClusterIPs: []string{"10.0.0.1"}, Type: corev1.ServiceTypeClusterIP,
		SessionAffinity: corev1.ServiceAffinityNone, IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol},
		IPFamilyPolicy: &singleStack, InternalTrafficPolicy: &cluster,
	}
	if !equality.Semantic.DeepEqual(svc.Spec, want) {
		t.Errorf("spec\n%+v\nwant\n%+v", svc.Spec, want)
	}
	if wantLabels := map[string]string{"component": "apiserver", "provider": "kubernetes"}; !equality.Semantic.DeepEqual(svc.Labels, wantLabels) {
		t.Errorf("labels %v, want %v", svc.Labels, wantLabels)
	}
	// The endpoints would be written right after the Service.
	time.Sleep(500 * time.Millisecond)
	if _, err := cs.CoreV1().Endpoints("default").Get(ctx, "kubernetes", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("Endpoints for a loopback server: %v", err)
	}
	if _, err := cs.DiscoveryV1().EndpointSlices("default").Get(ctx, "kubernetes", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("an EndpointSlice for a loopback server: %v", err)
	}
}

// TestKubernetesServiceEndpointsAcrossReplicas: two replicas on one etcd each keep a lease on their
// --advertise-address (a key with a TTL under /registry/masterleases/) and the Endpoints and
// EndpointSlice kubernetes list both; one that stops gracefully takes itself out at once.
func TestKubernetesServiceEndpointsAcrossReplicas(t *testing.T) {
	etcdURL, etcd := etcdForTest(t)
	start := func(ip string) (*servertest.Server, kubernetes.Interface) {
		s := servertest.Start(t, "--etcd-servers", etcdURL, "--advertise-address", ip)
		// The admin kubeconfig names the advertise address, which nothing listens on here.
		cfg := rest.CopyConfig(s.AdminConfig)
		cfg.Host = s.SecureURL
		return s, kubernetes.NewForConfigOrDie(cfg)
	}
	a, _ := start("10.99.0.2")
	_, cs := start("10.99.0.1")
	ctx := context.Background()
	listed := func(want ...string) func() error {
		return func() error {
			e, err := cs.CoreV1().Endpoints("default").Get(ctx, "kubernetes", metav1.GetOptions{})
			if err != nil {
				return err
			}
			var got []string
			for _, s := range e.Subsets {
				for _, a := range s.Addresses {
					got = append(got, a.IP)
				}
			}
			if !slices.Equal(got, want) {
				return fmt.Errorf("the Endpoints list %v, want %v", got, want)
			}
			slice, err := cs.DiscoveryV1().EndpointSlices("default").Get(ctx, "kubernetes", metav1.GetOptions{})
			if err != nil {
				return err
			}
			got = nil
			for _, ep := range slice.Endpoints {
				got = append(got, ep.Addresses...)
			}
			if !slices.Equal(got, want) || slice.Labels[discoveryv1.LabelServiceName] != "kubernetes" {
				return fmt.Errorf("the EndpointSlice lists %v (labels %v), want %v", got, slice.Labels, want)
			}
			return nil
		}
	}
	eventually(t, "both replicas are listed", listed("10.99.0.1", "10.99.0.2"))

	e, err := cs.CoreV1().Endpoints("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The replicas have their own ports; the Endpoints carry the port of whichever wrote last.
	if p := e.Subsets[0].Ports; len(p) != 1 || p[0].Name != "https" || p[0].Protocol != corev1.ProtocolTCP {
		t.Errorf("ports %+v, want one named https", p)
	}
	if e.Labels[discoveryv1.LabelSkipMirror] != "true" {
		t.Errorf("labels %v, want %s=true", e.Labels, discoveryv1.LabelSkipMirror)
	}
	resp, err := etcd.Get(ctx, "/registry/masterleases/10.99.0.2")
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("the lease key: %v %v", resp, err)
	}
	var lease corev1.Endpoints
	if err := json.Unmarshal(resp.Kvs[0].Value, &lease); err != nil || resp.Kvs[0].Lease == 0 ||
		lease.Subsets[0].Addresses[0].IP != "10.99.0.2" {
		t.Errorf("the lease key holds %s (etcd lease %x, %v), want the address with a TTL", resp.Kvs[0].Value, resp.Kvs[0].Lease, err)
	}

	if err := a.Stop(); err != nil {
		t.Fatal(err)
	}
	// No waiting for the TTL: the stopped replica removed itself.
	if err := listed("10.99.0.1")(); err != nil {
		t.Errorf("right after a replica stopped: %v", err)
	}
	if resp, err := etcd.Get(ctx, "/registry/masterleases/10.99.0.2"); err != nil || len(resp.Kvs) != 0 {
		t.Errorf("the stopped replica's lease key is still there: %v %v", resp, err)
	}
}

// TestEndpointControllers: what kube-controller-manager v1.37.2 writes, checked against it field by
// field: a Service with a selector gets empty Endpoints and a placeholder EndpointSlice, both gone
// with it; custom Endpoints of a Service without one are mirrored into an EndpointSlice, updated and
// deleted with them.
func TestEndpointControllers(t *testing.T) {
	s := servertest.Start(t)
	cs := kubernetes.NewForConfigOrDie(s.AdminConfig)
	ctx := context.Background()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "eps"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sel, err := cs.CoreV1().Services("eps").Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "sel", Labels: map[string]string{"app": "web", "tier": "x"}},
		Spec:       corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	trigger := sel.CreationTimestamp.UTC().Format(time.RFC3339)
	eventually(t, "the endpoints controller writes empty Endpoints", func() error {
		e, err := cs.CoreV1().Endpoints("eps").Get(ctx, "sel", metav1.GetOptions{})
		if err != nil {
			return err
		}
		wantLabels := map[string]string{"app": "web", "tier": "x", "endpoints.kubernetes.io/managed-by": "endpoint-controller"}
		wantAnnotations := map[string]string{corev1.EndpointsLastChangeTriggerTime: trigger}
		if len(e.Subsets) != 0 || !equality.Semantic.DeepEqual(e.Labels, wantLabels) || !equality.Semantic.DeepEqual(e.Annotations, wantAnnotations) {
			return fmt.Errorf("got labels %v, annotations %v, subsets %v", e.Labels, e.Annotations, e.Subsets)
		}
		return nil
	})
	var placeholder string
	eventually(t, "the endpointslice controller writes a placeholder slice", func() error {
		list, err := cs.DiscoveryV1().EndpointSlices("eps").List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=sel"})
		if err != nil || len(list.Items) != 1 {
			return fmt.Errorf("%v slices: %v", list, err)
		}
		es := list.Items[0]
		yes := true
		wantOwner := []metav1.OwnerReference{{APIVersion: "v1", Kind: "Service", Name: "sel", UID: sel.UID, Controller: &yes, BlockOwnerDeletion: &yes}}
		wantLabels := map[string]string{"app": "web", "tier": "x", discoveryv1.LabelServiceName: "sel",
			discoveryv1.LabelManagedBy: "endpointslice-controller.k8s.io"}
		if es.GenerateName != "sel-" || es.AddressType != discoveryv1.AddressTypeIPv4 || len(es.Endpoints) != 0 || len(es.Ports) != 0 ||
			!equality.Semantic.DeepEqual(es.Labels, wantLabels) || !equality.Semantic.DeepEqual(es.OwnerReferences, wantOwner) ||
			es.Annotations[corev1.EndpointsLastChangeTriggerTime] != trigger {
			return fmt.Errorf("got %+v", es)
		}
		placeholder = es.Name
		return nil
	})

	if _, err := cs.CoreV1().Services("eps").Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "nosel"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(9090)}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	custom, err := cs.CoreV1().Endpoints("eps").Create(ctx, &corev1.Endpoints{
		ObjectMeta: metav1.ObjectMeta{Name: "nosel", Labels: map[string]string{"foo": "bar"},
			Annotations: map[string]string{"a": "b", corev1.LastAppliedConfigAnnotation: "{}"}},
		Subsets: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "10.1.2.3"}, {IP: "10.1.2.4"}},
			NotReadyAddresses: []corev1.EndpointAddress{{IP: "10.1.2.5"}}, Ports: []corev1.EndpointPort{{Name: "http", Port: 9090}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mirrored := func(want map[string]bool, port int32) func() error {
		return func() error {
			list, err := cs.DiscoveryV1().EndpointSlices("eps").List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=nosel"})
			if err != nil {
				return err
			}
			if want == nil {
				if len(list.Items) != 0 {
					return fmt.Errorf("%d slices left", len(list.Items))
				}
				return nil
			}
			if len(list.Items) != 1 {
				return fmt.Errorf("%d slices, want 1", len(list.Items))
			}
			es := list.Items[0]
			got := map[string]bool{}
			for _, ep := range es.Endpoints {
				got[ep.Addresses[0]] = *ep.Conditions.Ready
			}
			yes := true
			wantOwner := []metav1.OwnerReference{{APIVersion: "v1", Kind: "Endpoints", Name: "nosel", UID: custom.UID, Controller: &yes, BlockOwnerDeletion: &yes}}
			wantLabels := map[string]string{"foo": "bar", discoveryv1.LabelServiceName: "nosel",
				discoveryv1.LabelManagedBy: "endpointslicemirroring-controller.k8s.io"}
			name, proto := "http", corev1.ProtocolTCP
			wantPorts := []discoveryv1.EndpointPort{{Name: &name, Port: &port, Protocol: &proto}}
			if es.GenerateName != "nosel-" || !equality.Semantic.DeepEqual(got, want) || !equality.Semantic.DeepEqual(es.Labels, wantLabels) ||
				!equality.Semantic.DeepEqual(es.Annotations, map[string]string{"a": "b"}) || !equality.Semantic.DeepEqual(es.OwnerReferences, wantOwner) ||
				!equality.Semantic.DeepEqual(es.Ports, wantPorts) {
				return fmt.Errorf("got %s %v, labels %v, annotations %v, owners %v, ports %s", es.GenerateName, got, es.Labels, es.Annotations,
					es.OwnerReferences, portsString(es.Ports))
			}
			return nil
		}
	}
	eventually(t, "the custom Endpoints are mirrored", mirrored(map[string]bool{"10.1.2.3": true, "10.1.2.4": true, "10.1.2.5": false}, 9090))
	custom, err = cs.CoreV1().Endpoints("eps").Get(ctx, "nosel", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	custom.Subsets = []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "10.1.2.6"}}, Ports: []corev1.EndpointPort{{Name: "http", Port: 9091}}}}
	if _, err := cs.CoreV1().Endpoints("eps").Update(ctx, custom, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "an update is mirrored", mirrored(map[string]bool{"10.1.2.6": true}, 9091))
	if err := cs.CoreV1().Endpoints("eps").Delete(ctx, "nosel", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the mirrored slice goes with its Endpoints", mirrored(nil, 0))

	if err := cs.CoreV1().Services("eps").Delete(ctx, "sel", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the Endpoints and the slice go with their Service", func() error {
		if _, err := cs.CoreV1().Endpoints("eps").Get(ctx, "sel", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the Endpoints: %v", err)
		}
		if _, err := cs.DiscoveryV1().EndpointSlices("eps").Get(ctx, placeholder, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the slice: %v", err)
		}
		return nil
	})
}

func portsString(ports []discoveryv1.EndpointPort) string {
	b, _ := json.Marshal(ports)
	return string(b)
}
