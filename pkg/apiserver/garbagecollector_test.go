package apiserver_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/apictl/apictl/internal/servertest"
)

// ownedBy is an owner reference to obj.
func ownedBy(kind, apiVersion string, obj metav1.Object, block bool) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: obj.GetName(), UID: obj.GetUID(), BlockOwnerDeletion: &block}
}

// waitGone waits until every named ConfigMap of ns is gone.
func waitConfigMapsGone(t testing.TB, cs kubernetes.Interface, ns string, names []string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for _, name := range names {
		for {
			_, err := cs.CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if time.Now().After(deadline) {
				t.Fatalf("configmap %s/%s still exists after %v", ns, name, within)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// TestGarbageCollectorBackground: deleting an owner deletes its dependents; a dependent that names
// a live object of the owner's name but another UID is collected too, and one with a live owner
// stays.
func TestGarbageCollectorBackground(t *testing.T) {
	s := servertest.Start(t)
	cs := kubernetes.NewForConfigOrDie(s.AdminConfig)
	ctx := context.Background()
	cms := cs.CoreV1().ConfigMaps("default")
	owner, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var deps []string
	for i := range 10 {
		name := fmt.Sprintf("dep-%d", i)
		deps = append(deps, name)
		_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name,
			OwnerReferences: []metav1.OwnerReference{ownedBy("ConfigMap", "v1", owner, false)}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	wrong := owner.DeepCopy()
	wrong.UID = types.UID("00000000-0000-0000-0000-000000000000")
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "wrong-uid",
		OwnerReferences: []metav1.OwnerReference{ownedBy("ConfigMap", "v1", wrong, false)}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitConfigMapsGone(t, cs, "default", []string{"wrong-uid"}, 10*time.Second)
	for _, d := range deps {
		if _, err := cms.Get(ctx, d, metav1.GetOptions{}); err != nil {
			t.Fatalf("a dependent of a live owner: %v", err)
		}
	}
	if err := cms.Delete(ctx, "owner", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitConfigMapsGone(t, cs, "default", deps, 10*time.Second)
}

// TestGarbageCollectorForegroundAndOrphan: a foreground delete keeps the owner, with the
// foregroundDeletion finalizer, until its blocking dependents are gone; an orphaning delete removes
// the owner's references from its dependents and leaves them.
func TestGarbageCollectorForegroundAndOrphan(t *testing.T) {
	s := servertest.Start(t)
	cs := kubernetes.NewForConfigOrDie(s.AdminConfig)
	ctx := context.Background()
	cms := cs.CoreV1().ConfigMaps("default")
	mk := configMapMaker(t, cms)

	fg := mk("fg-owner", nil)
	// A finalizer of its own holds the dependent, so that the owner is seen waiting.
	mk("fg-dep-held", fg, "example.com/hold")
	mk("fg-dep", fg)
	policy := metav1.DeletePropagationForeground
	if err := cms.Delete(ctx, "fg-owner", metav1.DeleteOptions{PropagationPolicy: &policy}); err != nil {
		t.Fatal(err)
	}
	waitConfigMapsGone(t, cs, "default", []string{"fg-dep"}, 10*time.Second)
	got, err := cms.Get(ctx, "fg-owner", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the owner went before its blocking dependent: %v", err)
	}
	if got.DeletionTimestamp == nil || !slicesContains(got.Finalizers, metav1.FinalizerDeleteDependents) {
		t.Fatalf("owner: deletionTimestamp %v finalizers %v, want set and foregroundDeletion", got.DeletionTimestamp, got.Finalizers)
	}
	held, err := cms.Get(ctx, "fg-dep-held", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if held.DeletionTimestamp == nil {
		t.Fatal("the held dependent was not deleted")
	}
	held.Finalizers = nil
	if _, err := cms.Update(ctx, held, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitConfigMapsGone(t, cs, "default", []string{"fg-dep-held", "fg-owner"}, 10*time.Second)

	or := mk("orphan-owner", nil)
	mk("orphan-dep", or)
	orphan := metav1.DeletePropagationOrphan
	if err := cms.Delete(ctx, "orphan-owner", metav1.DeleteOptions{PropagationPolicy: &orphan}); err != nil {
		t.Fatal(err)
	}
	waitConfigMapsGone(t, cs, "default", []string{"orphan-owner"}, 10*time.Second)
	dep, err := cms.Get(ctx, "orphan-dep", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("an orphaned dependent was deleted: %v", err)
	}
	if len(dep.OwnerReferences) != 0 {
		t.Fatalf("orphaned dependent still has owner references %v", dep.OwnerReferences)
	}
	metrics := scrape(t, s)
	for _, want := range []string{
		`apictl_garbage_collector_finalizers_removed_total{finalizer="foregroundDeletion"} 1`,
		`apictl_garbage_collector_finalizers_removed_total{finalizer="orphan"} 1`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

func slicesContains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestGarbageCollectorCustomResourcesAtRuntime: the collector follows a CRD created while the server
// runs (owners and dependents of its kind), removes the reference to a deleted owner from a
// dependent that keeps a live one, collects it once the CRD's deletion takes its last owner, keeps
// working after the CRD is gone, and says what it does in /metrics.
func TestGarbageCollectorCustomResourcesAtRuntime(t *testing.T) {
	s := servertest.Start(t)
	ctx := context.Background()
	cfg := *s.AdminConfig
	cfg.QPS = -1
	crds := apiextensionsclient.NewForConfigOrDie(&cfg).ApiextensionsV1().CustomResourceDefinitions()
	if _, err := crds.Create(ctx, replicaCRD(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	served(t, s, "/apis/example.com/v1/namespaces/default/gadgets", http.StatusOK)
	gadgets := dynamic.NewForConfigOrDie(&cfg).Resource(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gadgets"}).Namespace("default")
	cms := kubernetes.NewForConfigOrDie(&cfg).CoreV1().ConfigMaps("default")
	gadget := func(name string, owners ...metav1.OwnerReference) *unstructured.Unstructured {
		t.Helper()
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": map[string]any{"name": name}}}
		u.SetOwnerReferences(owners)
		out, err := gadgets.Create(ctx, u, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	owner, other := gadget("owner"), gadget("other")
	gadget("child", ownedBy("Gadget", "example.com/v1", owner, false))
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "two-owners", OwnerReferences: []metav1.OwnerReference{
		ownedBy("Gadget", "example.com/v1", owner, false), ownedBy("Gadget", "example.com/v1", other, false)}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := gadgets.Delete(ctx, "owner", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, childErr := gadgets.Get(ctx, "child", metav1.GetOptions{})
		cm, err := cms.Get(ctx, "two-owners", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the dependent with a live owner left: %v", err)
		}
		if apierrors.IsNotFound(childErr) && len(cm.OwnerReferences) == 1 && cm.OwnerReferences[0].UID == other.GetUID() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 10s: child %v, two-owners' references %v", childErr, cm.OwnerReferences)
		}
		time.Sleep(20 * time.Millisecond)
	}

	metrics := scrape(t, s)
	for _, want := range []string{
		`apictl_garbage_collector_deletions_total{propagation_policy="Background"} 1`,
		`apictl_garbage_collector_owner_references_removed_total 1`,
		`workqueue_adds_total{name="garbage_collector_attempt_to_delete"}`,
		`workqueue_depth{name="garbage_collector_attempt_to_orphan"} 0`,
		`apictl_controller_running{controller="garbage-collector-controller"} 1`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	// The CRD goes with its instances, and the last owner of two-owners with them; the collector
	// lets go of the resource and keeps working.
	if err := crds.Delete(ctx, "gadgets.example.com", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	served(t, s, "/apis/example.com/v1/namespaces/default/gadgets", http.StatusNotFound)
	waitConfigMapsGone(t, kubernetes.NewForConfigOrDie(&cfg), "default", []string{"two-owners"}, 10*time.Second)
	keeper, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "keeper"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kept",
		OwnerReferences: []metav1.OwnerReference{ownedBy("ConfigMap", "v1", keeper, false)}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, "keeper", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitConfigMapsGone(t, kubernetes.NewForConfigOrDie(&cfg), "default", []string{"kept"}, 10*time.Second)
}

// scrape returns the server's /metrics.
func scrape(t *testing.T, s *servertest.Server) string {
	t.Helper()
	return getBody(t, s.InsecureURL+"/metrics")
}

// getBody returns the body of a GET of url, whatever its status.
func getBody(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

// configMapMaker returns a function that creates ConfigMaps in cms, each with finalizers and, when
// owner is set, a blocking reference to it.
func configMapMaker(t *testing.T, cms corev1client.ConfigMapInterface) func(name string, owner *corev1.ConfigMap, finalizers ...string) *corev1.ConfigMap {
	return func(name string, owner *corev1.ConfigMap, finalizers ...string) *corev1.ConfigMap {
		t.Helper()
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Finalizers: finalizers}}
		if owner != nil {
			cm.OwnerReferences = []metav1.OwnerReference{ownedBy("ConfigMap", "v1", owner, true)}
		}
		out, err := cms.Create(context.Background(), cm, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
}

// TestGarbageCollectorNestedForeground: in a foreground deletion, a dependent that has blocking
// dependents of its own is deleted in the foreground too, and each level goes only after the one
// below it.
func TestGarbageCollectorNestedForeground(t *testing.T) {
	s := servertest.Start(t)
	cs := kubernetes.NewForConfigOrDie(s.AdminConfig)
	ctx := context.Background()
	cms := cs.CoreV1().ConfigMaps("default")
	mk := configMapMaker(t, cms)
	top := mk("top", nil)
	middle := mk("middle", top)
	mk("bottom", middle, "example.com/hold")
	policy := metav1.DeletePropagationForeground
	if err := cms.Delete(ctx, "top", metav1.DeleteOptions{PropagationPolicy: &policy}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		m, err := cms.Get(ctx, "middle", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("middle went before bottom: %v", err)
		}
		b, err := cms.Get(ctx, "bottom", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if m.DeletionTimestamp != nil && slicesContains(m.Finalizers, metav1.FinalizerDeleteDependents) && b.DeletionTimestamp != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 10s: middle %v %v, bottom %v", m.DeletionTimestamp, m.Finalizers, b.DeletionTimestamp)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := cms.Get(ctx, "top", metav1.GetOptions{}); err != nil {
		t.Fatalf("top went before its dependents: %v", err)
	}
	if _, err := cms.Patch(ctx, "bottom", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitConfigMapsGone(t, cs, "default", []string{"bottom", "middle", "top"}, 10*time.Second)
}
