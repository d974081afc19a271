package apiserver_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/apictl/apictl/internal/servertest"
)

func replicaCRD() *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "gadgets.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "gadgets", Singular: "gadget", Kind: "Gadget", ListKind: "GadgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr(true)}}}},
		},
	}
}

func ptr[T any](v T) *T { return &v }

// served polls until GET path on s answers want, and returns how long that took.
func served(t *testing.T, s *servertest.Server, path string, want int) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		resp, err := http.Get(s.InsecureURL + path)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == want {
				return time.Since(start)
			}
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("GET %s did not answer %d within 10s", path, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestCRDServedByEveryReplica: a CRD created through one replica is served by the other within a
// second, objects written through either are read through both, and its deletion through the other
// replica removes it from both.
func TestCRDServedByEveryReplica(t *testing.T) {
	etcd, _ := etcdForTest(t)
	a := servertest.Start(t, "--etcd-servers", etcd)
	b := servertest.Start(t, "--etcd-servers", etcd)
	ctx := context.Background()
	crdsA := apiextensionsclient.NewForConfigOrDie(a.AdminConfig).ApiextensionsV1().CustomResourceDefinitions()
	crdsB := apiextensionsclient.NewForConfigOrDie(b.AdminConfig).ApiextensionsV1().CustomResourceDefinitions()

	if _, err := crdsA.Create(ctx, replicaCRD(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const list = "/apis/example.com/v1/namespaces/default/gadgets"
	if d := served(t, b, list, http.StatusOK); d > time.Second {
		t.Errorf("replica B served the CRD %v after replica A created it, want within 1s", d)
	}
	served(t, a, list, http.StatusOK)

	gvr := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gadgets"}
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Gadget",
		"metadata": map[string]any{"name": "g"}, "spec": map[string]any{"n": int64(1)}}}
	if _, err := dynamic.NewForConfigOrDie(b.AdminConfig).Resource(gvr).Namespace("default").Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating through replica B: %v", err)
	}
	if _, err := dynamic.NewForConfigOrDie(a.AdminConfig).Resource(gvr).Namespace("default").Get(ctx, "g", metav1.GetOptions{}); err != nil {
		t.Fatalf("reading through replica A: %v", err)
	}
	eventually(t, "replica A's watch cache of gadgets in /metrics", func() error {
		resp, err := http.Get(a.InsecureURL + "/metrics")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if want := `apiserver_watch_cache_objects{group="example.com",resource="gadgets"} 1`; !strings.Contains(string(body), want) {
			return fmt.Errorf("no %s", want)
		}
		return nil
	})
	crd, err := crdsB.Get(ctx, "gadgets.example.com", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established && c.Status != apiextensionsv1.ConditionTrue {
			t.Errorf("Established = %s on replica B", c.Status)
		}
	}

	if err := crdsB.Delete(ctx, "gadgets.example.com", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	served(t, a, list, http.StatusNotFound)
	served(t, b, list, http.StatusNotFound)
	served(t, a, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.example.com", http.StatusNotFound)
}

// TestCRDDeletionWaitsForInstances: deleting a CRD marks it Terminating and deletes its instances;
// one held by a finalizer keeps the CRD (and its routes) until the finalizer goes; meanwhile creates
// are refused as kube refuses them.
func TestCRDDeletionWaitsForInstances(t *testing.T) {
	s := servertest.Start(t)
	ctx := context.Background()
	crds := apiextensionsclient.NewForConfigOrDie(s.AdminConfig).ApiextensionsV1().CustomResourceDefinitions()
	if _, err := crds.Create(ctx, replicaCRD(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const list = "/apis/example.com/v1/namespaces/default/gadgets"
	served(t, s, list, http.StatusOK)
	gvr := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gadgets"}
	gadgets := dynamic.NewForConfigOrDie(s.AdminConfig).Resource(gvr).Namespace("default")
	gadget := func(name string, finalizers ...string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Gadget",
			"metadata": map[string]any{"name": name}}}
		u.SetFinalizers(finalizers)
		return u
	}
	for _, g := range []*unstructured.Unstructured{gadget("free"), gadget("held", "example.com/hold")} {
		if _, err := gadgets.Create(ctx, g, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := crds.Delete(ctx, "gadgets.example.com", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the free gadget deleted and the held one marked", func() error {
		list, err := gadgets.List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		if len(list.Items) != 1 || list.Items[0].GetName() != "held" || list.Items[0].GetDeletionTimestamp() == nil {
			return fmt.Errorf("gadgets: %d items", len(list.Items))
		}
		return nil
	})
	crd, err := crds.Get(ctx, "gadgets.example.com", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the CRD went while an instance was held: %v", err)
	}
	if crd.DeletionTimestamp == nil || !slices.Contains(crd.Finalizers, apiextensionsv1.CustomResourceCleanupFinalizer) {
		t.Errorf("deleted CRD: deletionTimestamp %v, finalizers %v", crd.DeletionTimestamp, crd.Finalizers)
	}
	_, err = gadgets.Create(ctx, gadget("late"), metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || err.Error() != `gadgets.example.com "late" is forbidden: create not allowed while custom resource definition is terminating` {
		t.Errorf("create during termination: %v", err)
	}

	held, err := gadgets.Get(ctx, "held", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	held.SetFinalizers(nil)
	if _, err := gadgets.Update(ctx, held, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	served(t, s, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.example.com", http.StatusNotFound)
	served(t, s, list, http.StatusNotFound)
}

// TestAPIConfigCRDsAreStored: the --api-config manifests are created through the API at start,
// visible and Established like any CRD, and served when /readyz first turns green; a changed
// manifest updates the stored CRD at the next start.
func TestAPIConfigCRDsAreStored(t *testing.T) {
	manifest := filepath.Join(t.TempDir(), "gadgets.yaml")
	if err := os.WriteFile(manifest, []byte(gadgetsCRD), 0o600); err != nil {
		t.Fatal(err)
	}
	etcd, _ := etcdForTest(t)
	s := servertest.Start(t, "--etcd-servers", etcd, "--api-config", manifest)
	resp, err := http.Get(s.InsecureURL + "/apis/example.com/v1/namespaces/default/gadgets")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("gadgets not served when ready: %v %v", err, resp)
	}
	resp.Body.Close()
	crds := apiextensionsclient.NewForConfigOrDie(s.AdminConfig).ApiextensionsV1().CustomResourceDefinitions()
	eventually(t, "the manifest's CRD stored and Established", func() error {
		crd, err := crds.Get(context.Background(), "gadgets.example.com", metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range crd.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("conditions %v", crd.Status.Conditions)
	})
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(gadgetsCRD, "listKind: GadgetList}", "listKind: GadgetList, shortNames: [gd]}", 1)
	if err := os.WriteFile(manifest, []byte(changed), 0o600); err != nil {
		t.Fatal(err)
	}
	s = servertest.Start(t, "--etcd-servers", etcd, "--api-config", manifest)
	crds = apiextensionsclient.NewForConfigOrDie(s.AdminConfig).ApiextensionsV1().CustomResourceDefinitions()
	crd, err := crds.Get(context.Background(), "gadgets.example.com", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(crd.Spec.Names.ShortNames, []string{"gd"}) {
		t.Errorf("short names after the manifest changed: %v", crd.Spec.Names.ShortNames)
	}
}

// TestCRDDefaultsOnRead: a default added to a CRD shows in objects written before it, in GET, LIST
// and watch, as kube's decoder applies defaults to every object it reads; nothing is rewritten.
func TestCRDDefaultsOnRead(t *testing.T) {
	s := servertest.Start(t)
	ctx := context.Background()
	crds := apiextensionsclient.NewForConfigOrDie(s.AdminConfig).ApiextensionsV1().CustomResourceDefinitions()
	crd := replicaCRD()
	crd.Spec.Versions[0].Schema.OpenAPIV3Schema = &apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
		"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"size": {Type: "integer"}}}}}
	created, err := crds.Create(ctx, crd, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const list = "/apis/example.com/v1/namespaces/default/gadgets"
	served(t, s, list, http.StatusOK)
	gvr := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gadgets"}
	gadgets := dynamic.NewForConfigOrDie(s.AdminConfig).Resource(gvr).Namespace("default")
	old, err := gadgets.Create(ctx, &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Gadget",
		"metadata": map[string]any{"name": "old"}, "spec": map[string]any{"size": int64(9007199254740993)}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	eventually(t, "the CRD updated with a default", func() error {
		cur, err := crds.Get(ctx, created.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		spec := cur.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
		spec.Properties["color"] = apiextensionsv1.JSONSchemaProps{Type: "string", Default: &apiextensionsv1.JSON{Raw: []byte(`"blue"`)}}
		cur.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = spec
		_, err = crds.Update(ctx, cur, metav1.UpdateOptions{})
		return err
	})
	eventually(t, "GET shows the default", func() error {
		got, err := gadgets.Get(ctx, "old", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if color, _, _ := unstructured.NestedString(got.Object, "spec", "color"); color != "blue" {
			return fmt.Errorf("spec.color = %q", color)
		}
		if got.GetResourceVersion() != old.GetResourceVersion() {
			t.Errorf("the object was rewritten: resourceVersion %s, was %s", got.GetResourceVersion(), old.GetResourceVersion())
		}
		return nil
	})
	resp, err := http.Get(s.InsecureURL + list)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"color":"blue"`) || !strings.Contains(string(body), `"size":9007199254740993`) {
		t.Errorf("LIST lacks the default or lost digits: %s", body)
	}
}
