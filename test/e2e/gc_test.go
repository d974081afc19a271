package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

var widgets = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}

// gcCluster is a running apictl serve with the Widget CRD, driven by kubectl and client-go.
type gcCluster struct {
	kubectl func(args ...string) string
	kube    kubernetes.Interface
	dyn     dynamic.Interface
}

func startGCCluster(t *testing.T) *gcCluster {
	t.Helper()
	ports := freePorts(t, 2)
	dir := t.TempDir()
	startServeIn(t, dir, "--secure-port", fmt.Sprint(ports[0]), "--insecure-port", fmt.Sprint(ports[1]),
		"--bind-address", "127.0.0.1", "--api-config", mustAbs(t, "testdata/widgets.yaml"))
	waitReady(t, ports[1])
	kubeconfig := filepath.Join(dir, "apictl.local", "pki", "admin.kubeconfig")
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = -1, 0
	return &gcCluster{
		kubectl: func(args ...string) string {
			return kubectl(t, append([]string{"--kubeconfig", kubeconfig}, args...)...)
		},
		kube: kubernetes.NewForConfigOrDie(cfg),
		dyn:  dynamic.NewForConfigOrDie(cfg),
	}
}

func mustAbs(t *testing.T, path string) string {
	t.Helper()
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

func (c *gcCluster) widget(t *testing.T, ns, name string, owners ...metav1.OwnerReference) *unstructured.Unstructured {
	t.Helper()
	w := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": name, "labels": map[string]any{"gc-test": "yes"}}, "spec": map[string]any{"size": "s"}}}
	w.SetOwnerReferences(owners)
	out, err := c.dyn.Resource(widgets).Namespace(ns).Create(context.Background(), w, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (c *gcCluster) configMap(t *testing.T, ns, name string, finalizers []string, owners ...metav1.OwnerReference) {
	t.Helper()
	_, err := c.kube.CoreV1().ConfigMaps(ns).Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name: name, Finalizers: finalizers, OwnerReferences: owners, Labels: map[string]string{"gc-test": "yes"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

// dependents creates n ConfigMaps and n Widgets named <prefix>-cm-<i> and <prefix>-wd-<i> owned
// by owner, concurrently, and returns their names.
func (c *gcCluster) dependents(t *testing.T, ns, prefix string, n int, owner metav1.OwnerReference) (cms, wds []string) {
	t.Helper()
	for i := range n {
		cms = append(cms, fmt.Sprintf("%s-cm-%d", prefix, i))
		wds = append(wds, fmt.Sprintf("%s-wd-%d", prefix, i))
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			c.configMap(t, ns, cms[i], nil, owner)
			c.widget(t, ns, wds[i], owner)
		})
	}
	wg.Wait()
	return cms, wds
}

func ownerRef(w *unstructured.Unstructured, block bool) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: w.GetAPIVersion(), Kind: w.GetKind(), Name: w.GetName(), UID: w.GetUID(), BlockOwnerDeletion: &block}
}

// exists reports whether the named object exists.
func (c *gcCluster) exists(t *testing.T, gvr schema.GroupVersionResource, ns, name string) bool {
	t.Helper()
	var err error
	if gvr.Resource == "configmaps" {
		_, err = c.kube.CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{})
	} else {
		_, err = c.dyn.Resource(gvr).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	}
	if apierrors.IsNotFound(err) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return true
}

var configmaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// waitGone waits until none of the named objects exists.
func (c *gcCluster) waitGone(t *testing.T, gvr schema.GroupVersionResource, ns string, names []string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for _, name := range names {
		for c.exists(t, gvr, ns, name) {
			if time.Now().After(deadline) {
				t.Fatalf("%s %s/%s still exists after %v", gvr.Resource, ns, name, within)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// TestGarbageCollectionWithKubectl is issue 16's must-show: a Widget owner with 100 ConfigMap and
// 100 Widget dependents deleted by kubectl with each cascade, and the collector's other rules.
func TestGarbageCollectionWithKubectl(t *testing.T) {
	c := startGCCluster(t)
	const ns = "default"
	const n = 100

	t.Run("background", func(t *testing.T) {
		owner := c.widget(t, ns, "bg")
		cms, wds := c.dependents(t, ns, "bg", n, ownerRef(owner, false))
		start := time.Now()
		if out := c.kubectl("delete", "widget", "bg", "--cascade=background"); !strings.Contains(out, `widget.example.com "bg" deleted`) {
			t.Fatalf("kubectl delete: %s", out)
		}
		c.waitGone(t, configmaps, ns, cms, 30*time.Second)
		c.waitGone(t, widgets, ns, wds, 30*time.Second)
		t.Logf("%d dependents collected %v after the owner's delete", 2*n, time.Since(start))
	})

	t.Run("foreground", func(t *testing.T) {
		owner := c.widget(t, ns, "fg")
		cms, wds := c.dependents(t, ns, "fg", n, ownerRef(owner, true))
		// A dependent held by a finalizer of its own keeps the owner waiting, so that what it
		// shows meanwhile can be read.
		c.configMap(t, ns, "fg-held", []string{"example.com/hold"}, ownerRef(owner, true))
		c.kubectl("delete", "widget", "fg", "--cascade=foreground", "--wait=false")
		c.waitGone(t, configmaps, ns, cms, 30*time.Second)
		c.waitGone(t, widgets, ns, wds, 30*time.Second)
		out := c.kubectl("get", "widget", "fg", "-o", "yaml")
		for _, want := range []string{"- foregroundDeletion", "deletionTimestamp:", "deletionGracePeriodSeconds: 0"} {
			if !strings.Contains(out, want) {
				t.Errorf("the owner waiting for its dependents lacks %q:\n%s", want, out)
			}
		}
		held := c.kubectl("get", "configmap", "fg-held", "-o", "jsonpath={.metadata.deletionTimestamp}")
		if held == "" {
			t.Error("the held dependent was not deleted")
		}
		c.kubectl("patch", "configmap", "fg-held", "--type=merge", "-p", `{"metadata":{"finalizers":null}}`)
		c.waitGone(t, configmaps, ns, []string{"fg-held"}, 30*time.Second)
		c.waitGone(t, widgets, ns, []string{"fg"}, 30*time.Second)
	})

	t.Run("orphan", func(t *testing.T) {
		owner := c.widget(t, ns, "or")
		cms, wds := c.dependents(t, ns, "or", n, ownerRef(owner, true))
		if out := c.kubectl("delete", "widget", "or", "--cascade=orphan"); !strings.Contains(out, `widget.example.com "or" deleted`) {
			t.Fatalf("kubectl delete: %s", out)
		}
		// kubectl waited for the owner, whose orphan finalizer goes once every reference has.
		if c.exists(t, widgets, ns, "or") {
			t.Fatal("the owner is still there after kubectl delete returned")
		}
		refs := func(resource string) string {
			return c.kubectl("get", resource, "-l", "gc-test=yes", "-o", "jsonpath={range .items[*]}{.metadata.name}={.metadata.ownerReferences}{\"\\n\"}{end}")
		}
		for _, kind := range []struct {
			resource string
			names    []string
		}{{"configmaps", cms}, {"widgets", wds}} {
			out := refs(kind.resource)
			for _, name := range kind.names {
				if !strings.Contains(out, name+"=\n") {
					t.Fatalf("%s %s is gone or keeps its owner reference:\n%s", kind.resource, name, out)
				}
			}
		}
		sel := metav1.ListOptions{LabelSelector: "gc-test=yes"}
		if err := c.kube.CoreV1().ConfigMaps(ns).DeleteCollection(context.Background(), metav1.DeleteOptions{}, sel); err != nil {
			t.Fatal(err)
		}
		if err := c.dyn.Resource(widgets).Namespace(ns).DeleteCollection(context.Background(), metav1.DeleteOptions{}, sel); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("owner UID mismatch", func(t *testing.T) {
		owner := c.widget(t, ns, "live")
		wrong := ownerRef(owner, false)
		wrong.UID = types.UID("6a3c1f52-0000-4000-8000-000000000000")
		c.configMap(t, ns, "wrong-uid", nil, wrong)
		c.configMap(t, ns, "right-uid", nil, ownerRef(owner, false))
		c.waitGone(t, configmaps, ns, []string{"wrong-uid"}, 30*time.Second)
		if !c.exists(t, configmaps, ns, "right-uid") {
			t.Fatal("the dependent of the live owner was collected")
		}
		c.kubectl("delete", "widget", "live")
		c.waitGone(t, configmaps, ns, []string{"right-uid"}, 30*time.Second)
	})

	t.Run("dependent created after its owner was deleted", func(t *testing.T) {
		owner := c.widget(t, ns, "gone")
		c.kubectl("delete", "widget", "gone")
		c.configMap(t, ns, "late", nil, ownerRef(owner, false))
		c.widget(t, ns, "late", ownerRef(owner, false))
		c.waitGone(t, configmaps, ns, []string{"late"}, 30*time.Second)
		c.waitGone(t, widgets, ns, []string{"late"}, 30*time.Second)
	})

	t.Run("cluster-scoped owner of namespaced dependents", func(t *testing.T) {
		c.kubectl("create", "namespace", "gc-a")
		c.kubectl("create", "clusterrole", "gc-owner", "--verb=get", "--resource=configmaps")
		role, err := c.kube.RbacV1().ClusterRoles().Get(context.Background(), "gc-owner", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ref := metav1.OwnerReference{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: role.Name, UID: role.UID}
		c.configMap(t, ns, "of-cluster-role", nil, ref)
		c.configMap(t, "gc-a", "of-cluster-role", nil, ref)
		time.Sleep(500 * time.Millisecond) // time to collect them wrongly
		if !c.exists(t, configmaps, ns, "of-cluster-role") || !c.exists(t, configmaps, "gc-a", "of-cluster-role") {
			t.Fatal("a dependent of a live cluster-scoped owner was collected")
		}
		c.kubectl("delete", "clusterrole", "gc-owner")
		c.waitGone(t, configmaps, ns, []string{"of-cluster-role"}, 30*time.Second)
		c.waitGone(t, configmaps, "gc-a", []string{"of-cluster-role"}, 30*time.Second)
	})

	t.Run("owner in another namespace", func(t *testing.T) {
		c.kubectl("create", "namespace", "gc-b")
		owner := c.widget(t, ns, "elsewhere")
		// The collector reports the namespace mismatch when it has seen the owner before the
		// dependent; the two come through different watches.
		time.Sleep(300 * time.Millisecond)
		c.configMap(t, "gc-b", "cross", nil, ownerRef(owner, false))
		// References never cross namespaces: gc-b holds no such owner, so the dependent goes, and
		// kube's collector says why in an event.
		c.waitGone(t, configmaps, "gc-b", []string{"cross"}, 30*time.Second)
		var out string
		waitFor(t, 10*time.Second, "the OwnerRefInvalidNamespace event", func() bool {
			out = c.kubectl("get", "events", "-n", "gc-b", "-o", "jsonpath={range .items[*]}{.reason}|{.type}|{.source.component}|{.involvedObject.name}|{.message}{\"\\n\"}{end}")
			return strings.Contains(out, "OwnerRefInvalidNamespace")
		})
		want := fmt.Sprintf(`OwnerRefInvalidNamespace|Warning|garbage-collector-controller|cross|ownerRef [example.com/v1/Widget, namespace: gc-b, name: elsewhere, uid: %s] does not exist in namespace "gc-b"`, owner.GetUID())
		if !strings.Contains(out, want) {
			t.Errorf("events:\n%s\nwant a line %s", out, want)
		}
		if !c.exists(t, widgets, ns, "elsewhere") {
			t.Error("the owner in the other namespace was deleted")
		}
	})

	t.Run("cluster-scoped dependent of a namespaced owner kind", func(t *testing.T) {
		// As kube-controller-manager v1.37.2 does (checked against it): such a reference cannot
		// be resolved, so the dependent is never deleted, even once the object it names is gone,
		// and an event in the default namespace says so when the owner was seen.
		owner := c.widget(t, ns, "namespaced-owner")
		time.Sleep(300 * time.Millisecond)
		ref := ownerRef(owner, false)
		role := fmt.Sprintf(`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"gc-cluster-dep","ownerReferences":[{"apiVersion":%q,"kind":%q,"name":%q,"uid":%q}]}}`,
			ref.APIVersion, ref.Kind, ref.Name, ref.UID)
		if _, err := c.kube.RbacV1().RESTClient().Post().AbsPath("/apis/rbac.authorization.k8s.io/v1/clusterroles").Body([]byte(role)).DoRaw(context.Background()); err != nil {
			t.Fatal(err)
		}
		var out string
		waitFor(t, 10*time.Second, "the OwnerRefInvalidNamespace event", func() bool {
			out = c.kubectl("get", "events", "-n", "default", "--field-selector", "reason=OwnerRefInvalidNamespace", "-o", "jsonpath={range .items[*]}{.involvedObject.kind}/{.involvedObject.name}: {.message}{\"\\n\"}{end}")
			return strings.Contains(out, "ClusterRole/gc-cluster-dep")
		})
		want := fmt.Sprintf(`ClusterRole/gc-cluster-dep: ownerRef [example.com/v1/Widget, namespace: , name: namespaced-owner, uid: %s] does not exist in namespace ""`, owner.GetUID())
		if !strings.Contains(out, want) {
			t.Errorf("events:\n%s\nwant a line %s", out, want)
		}
		c.kubectl("delete", "widget", "namespaced-owner")
		time.Sleep(time.Second) // time to collect it wrongly
		if _, err := c.kube.RbacV1().ClusterRoles().Get(context.Background(), "gc-cluster-dep", metav1.GetOptions{}); err != nil {
			t.Fatalf("the cluster-scoped dependent: %v", err)
		}
	})
}
