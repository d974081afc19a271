//lint:file-ignore SA1019 core v1 Endpoints are deprecated in kube, which still serves them and keeps them with its controllers: so does apictl.

package endpoints

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
)

// start runs the controllers that newRun builds on a fake clientset holding objs, and stops them
// when the test ends.
func start(t *testing.T, objs []runtime.Object, build ...func(*fake.Clientset, informers.SharedInformerFactory, *slog.Logger) func(context.Context)) *fake.Clientset {
	t.Helper()
	client := fake.NewClientset(objs...)
	// The fake does not generate names, as the API server does for generateName.
	var n atomic.Int32
	client.PrependReactor("create", "*", func(a clienttesting.Action) (bool, runtime.Object, error) {
		obj := a.(clienttesting.CreateAction).GetObject().(metav1.Object)
		if obj.GetName() == "" && obj.GetGenerateName() != "" {
			obj.SetName(fmt.Sprintf("%s%05d", obj.GetGenerateName(), n.Add(1)))
		}
		return false, nil, nil
	})
	factory := informers.NewSharedInformerFactory(client, 0)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	var runs []func(context.Context)
	for _, b := range build {
		runs = append(runs, b(client, factory, log))
	}
	ctx, cancel := context.WithCancel(context.Background())
	factory.Start(ctx.Done())
	var wg sync.WaitGroup
	for _, run := range runs {
		wg.Go(func() { run(ctx) })
	}
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		factory.Shutdown()
	})
	return client
}

func endpointsController(c *fake.Clientset, f informers.SharedInformerFactory, log *slog.Logger) func(context.Context) {
	return NewEndpointsController(c, f, log).Run
}

func sliceController(c *fake.Clientset, f informers.SharedInformerFactory, log *slog.Logger) func(context.Context) {
	return NewSliceController(c, f, log).Run
}

func mirroringController(c *fake.Clientset, f informers.SharedInformerFactory, log *slog.Logger) func(context.Context) {
	return NewMirroringController(c, f, log).Run
}

// eventually retries check for a few seconds.
func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	var err error
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if err = check(); err == nil {
			return
		}
	}
	t.Fatalf("%s: %v", what, err)
}

func service(name string, selector map[string]string, clusterIP string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("svc-" + name), Labels: map[string]string{"app": name},
			CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))},
		Spec: corev1.ServiceSpec{Selector: selector, ClusterIP: clusterIP, Ports: []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}},
	}
}

func TestEndpointsController(t *testing.T) {
	tests := []struct {
		name       string
		svc        *corev1.Service
		want       bool
		wantLabels map[string]string
	}{
		{"selector", service("web", map[string]string{"app": "web"}, "10.0.0.10"), true,
			map[string]string{"app": "web", LabelManagedBy: EndpointsControllerName}},
		{"headless", service("hl", map[string]string{"app": "hl"}, corev1.ClusterIPNone), true,
			map[string]string{"app": "hl", LabelManagedBy: EndpointsControllerName, corev1.IsHeadlessService: ""}},
		{"no selector", service("nosel", nil, "10.0.0.11"), false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := start(t, []runtime.Object{tt.svc}, endpointsController)
			ctx := context.Background()
			if !tt.want {
				time.Sleep(200 * time.Millisecond)
				if _, err := client.CoreV1().Endpoints("ns").Get(ctx, tt.svc.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
					t.Fatalf("Endpoints for a Service without a selector: %v", err)
				}
				return
			}
			eventually(t, "the Endpoints are written", func() error {
				e, err := client.CoreV1().Endpoints("ns").Get(ctx, tt.svc.Name, metav1.GetOptions{})
				if err != nil {
					return err
				}
				if len(e.Subsets) != 0 || !equality.Semantic.DeepEqual(e.Labels, tt.wantLabels) ||
					e.Annotations[corev1.EndpointsLastChangeTriggerTime] != "2026-01-02T03:04:05Z" {
					return fmt.Errorf("got %+v", e)
				}
				return nil
			})
			if err := client.CoreV1().Services("ns").Delete(ctx, tt.svc.Name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			eventually(t, "the Endpoints go with their Service", func() error {
				_, err := client.CoreV1().Endpoints("ns").Get(ctx, tt.svc.Name, metav1.GetOptions{})
				if !apierrors.IsNotFound(err) {
					return fmt.Errorf("still there: %v", err)
				}
				return nil
			})
		})
	}
}

func TestSliceController(t *testing.T) {
	svc := service("web", map[string]string{"app": "web"}, "10.0.0.10")
	client := start(t, []runtime.Object{svc, service("nosel", nil, "10.0.0.11")}, sliceController)
	ctx := context.Background()
	eventually(t, "a placeholder slice is written", func() error {
		list, err := client.DiscoveryV1().EndpointSlices("ns").List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		if len(list.Items) != 1 {
			return fmt.Errorf("%d slices, want 1", len(list.Items))
		}
		s := list.Items[0]
		wantLabels := map[string]string{"app": "web", discoveryv1.LabelServiceName: "web", discoveryv1.LabelManagedBy: SliceControllerName}
		if s.AddressType != discoveryv1.AddressTypeIPv4 || len(s.Endpoints) != 0 || len(s.Ports) != 0 || s.GenerateName != "web-" ||
			!equality.Semantic.DeepEqual(s.Labels, wantLabels) || len(s.OwnerReferences) != 1 || s.OwnerReferences[0].Kind != "Service" ||
			s.OwnerReferences[0].UID != svc.UID || s.Annotations[corev1.EndpointsLastChangeTriggerTime] != "2026-01-02T03:04:05Z" {
			return fmt.Errorf("got %+v", s)
		}
		return nil
	})
}

func TestMirroringController(t *testing.T) {
	ctx := context.Background()
	endpoints := &corev1.Endpoints{
		ObjectMeta: metav1.ObjectMeta{Name: "nosel", Namespace: "ns", UID: "ep-uid", Labels: map[string]string{"foo": "bar"},
			Annotations: map[string]string{"a": "b", corev1.LastAppliedConfigAnnotation: "{}"}},
		Subsets: []corev1.EndpointSubset{{
			Addresses:         []corev1.EndpointAddress{{IP: "10.1.2.3"}, {IP: "10.1.2.4"}, {IP: "not-an-ip"}},
			NotReadyAddresses: []corev1.EndpointAddress{{IP: "10.1.2.5"}},
			Ports:             []corev1.EndpointPort{{Name: "http", Port: 9090, Protocol: corev1.ProtocolTCP}},
		}},
	}
	skipped := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "skipped", Namespace: "ns", Labels: map[string]string{discoveryv1.LabelSkipMirror: "true"}},
		Subsets: endpoints.Subsets}
	client := start(t, []runtime.Object{service("nosel", nil, "10.0.0.11"), service("skipped", nil, "10.0.0.12"), endpoints, skipped}, mirroringController)

	mirrored := func(want map[string]bool) func() error {
		return func() error {
			list, err := client.DiscoveryV1().EndpointSlices("ns").List(ctx, metav1.ListOptions{})
			if err != nil {
				return err
			}
			if want == nil {
				if len(list.Items) != 0 {
					return fmt.Errorf("%d slices, want none", len(list.Items))
				}
				return nil
			}
			if len(list.Items) != 1 {
				return fmt.Errorf("%d slices, want 1", len(list.Items))
			}
			s := list.Items[0]
			got := map[string]bool{}
			for _, ep := range s.Endpoints {
				got[ep.Addresses[0]] = *ep.Conditions.Ready
			}
			wantLabels := map[string]string{"foo": "bar", discoveryv1.LabelServiceName: "nosel", discoveryv1.LabelManagedBy: MirroringControllerName}
			if !equality.Semantic.DeepEqual(got, want) || !equality.Semantic.DeepEqual(s.Labels, wantLabels) ||
				!equality.Semantic.DeepEqual(s.Annotations, map[string]string{"a": "b"}) || s.OwnerReferences[0].UID != "ep-uid" ||
				len(s.Ports) != 1 || *s.Ports[0].Port != 9090 {
				return fmt.Errorf("got %+v", s)
			}
			return nil
		}
	}
	eventually(t, "the Endpoints are mirrored", mirrored(map[string]bool{"10.1.2.3": true, "10.1.2.4": true, "10.1.2.5": false}))

	endpoints.Subsets[0].Addresses = []corev1.EndpointAddress{{IP: "10.1.2.6"}}
	endpoints.Subsets[0].NotReadyAddresses = nil
	if _, err := client.CoreV1().Endpoints("ns").Update(ctx, endpoints, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "an update is mirrored", mirrored(map[string]bool{"10.1.2.6": true}))

	if err := client.CoreV1().Endpoints("ns").Delete(ctx, "nosel", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the slices go with the Endpoints", mirrored(nil))
}
