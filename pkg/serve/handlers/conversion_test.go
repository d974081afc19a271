package handlers_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/apictl/apictl/internal/servertest"
	"github.com/apictl/apictl/internal/webhooktest"
)

// gizmoCRD is example.com's Gizmo at v1 (spec.size, stored) and v2 (spec.replicas and spec.size, so
// that strategy None, which only changes apiVersion, has something to show), with conv.
func gizmoCRD(conv *apiextensionsv1.CustomResourceConversion) *apiextensionsv1.CustomResourceDefinition {
	schema := func(fields ...string) *apiextensionsv1.CustomResourceValidation {
		props := map[string]apiextensionsv1.JSONSchemaProps{}
		for _, f := range fields {
			props[f] = apiextensionsv1.JSONSchemaProps{Type: "integer"}
		}
		return &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object",
			Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": {Type: "object", Properties: props},
				"status": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"ready": {Type: "integer"}}}}}}
	}
	// Both versions scale .spec.size, which both have.
	subresources := &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{},
		Scale: &apiextensionsv1.CustomResourceSubresourceScale{SpecReplicasPath: ".spec.size", StatusReplicasPath: ".status.ready"}}
	crd := &apiextensionsv1.CustomResourceDefinition{
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "gizmos", Singular: "gizmo", Kind: "Gizmo", ListKind: "GizmoList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
				{Name: "v1", Served: true, Storage: true, Schema: schema("size"), Subresources: subresources},
				{Name: "v2", Served: true, Schema: schema("replicas", "size"), Subresources: subresources},
			},
			Conversion: conv,
		},
	}
	crd.APIVersion, crd.Kind, crd.Name = "apiextensions.k8s.io/v1", "CustomResourceDefinition", "gizmos.example.com"
	return crd
}

// startWithCRD starts a server whose --api-config holds crd.
func startWithCRD(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition) *api {
	t.Helper()
	manifest, err := json.Marshal(crd)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "gizmos.json")
	if err := os.WriteFile(file, manifest, 0o600); err != nil {
		t.Fatal(err)
	}
	return newAPI(t, servertest.Start(t, "--api-config", file))
}

const (
	gizmosV1 = "/apis/example.com/v1/namespaces/default/gizmos"
	gizmosV2 = "/apis/example.com/v2/namespaces/default/gizmos"
)

func gizmo(version, name, spec string) string {
	return `{"apiVersion":"example.com/` + version + `","kind":"Gizmo","metadata":{"name":"` + name + `"},"spec":` + spec + `}`
}

// object is the part of a custom resource these tests look at.
type object struct {
	APIVersion string `json:"apiVersion"`
	Metadata   struct {
		Name            string `json:"name"`
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
	Spec map[string]int64 `json:"spec"`
}

func decodeObject(t *testing.T, body string) object {
	t.Helper()
	var o object
	if err := json.Unmarshal([]byte(body), &o); err != nil {
		t.Fatalf("decoding %s: %v", body, err)
	}
	return o
}

// expectObject fails unless body is the object at apiVersion with exactly spec.
func expectObject(t *testing.T, r response, apiVersion string, spec map[string]int64) object {
	t.Helper()
	if r.code != 200 && r.code != 201 {
		t.Fatalf("status %d: %s", r.code, r.body)
	}
	o := decodeObject(t, r.body)
	if o.APIVersion != apiVersion || !equalSpec(o.Spec, spec) {
		t.Errorf("got %s %v, want %s %v: %s", o.APIVersion, o.Spec, apiVersion, spec, r.body)
	}
	return o
}

func equalSpec(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// list returns the items of a LIST, by name.
func (a *api) list(path string) (string, map[string]object) {
	a.t.Helper()
	r := a.do("GET", path, "")
	if r.code != 200 {
		a.t.Fatalf("list %s: %d %s", path, r.code, r.body)
	}
	var l struct {
		APIVersion string `json:"apiVersion"`
		Metadata   struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Items []object `json:"items"`
	}
	if err := json.Unmarshal([]byte(r.body), &l); err != nil {
		a.t.Fatal(err)
	}
	items := map[string]object{}
	for _, o := range l.Items {
		items[o.Metadata.Name] = o
	}
	return l.Metadata.ResourceVersion, items
}

// watchLines opens a watch and returns a function that reads its next line, "" once it ends.
func (a *api) watchLines(ctx context.Context, path string) func() string {
	a.t.Helper()
	req, err := http.NewRequestWithContext(ctx, "GET", a.InsecureURL+path, nil)
	if err != nil {
		a.t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		a.t.Fatalf("watch %s: %d", path, resp.StatusCode)
	}
	lines := make(chan string)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(lines)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
	}()
	a.t.Cleanup(func() {
		resp.Body.Close()
		<-done
	})
	return func() string {
		a.t.Helper()
		select {
		case line := <-lines:
			return line
		case <-time.After(10 * time.Second):
			a.t.Fatal("no watch event within 10s")
			return ""
		}
	}
}

// watchEventOf decodes a watch line.
func watchEventOf(t *testing.T, line string) (string, object, string) {
	t.Helper()
	var ev struct {
		Type   string          `json:"type"`
		Object json.RawMessage `json:"object"`
	}
	if err := json.Unmarshal([]byte(line), &ev); err != nil {
		t.Fatalf("event %q: %v", line, err)
	}
	return ev.Type, decodeObject(t, string(ev.Object)), string(ev.Object)
}

func TestConversionNone(t *testing.T) {
	a := startWithCRD(t, gizmoCRD(&apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}))
	expectObject(t, a.do("POST", gizmosV1, gizmo("v1", "a", `{"size":3}`)), "example.com/v1", map[string]int64{"size": 3})
	expectObject(t, a.do("GET", gizmosV2+"/a", ""), "example.com/v2", map[string]int64{"size": 3})

	// A v2 object is stored at v1, pruned to v1's schema: replicas goes, as in kube (None only changes
	// apiVersion), and the response is the stored object read back at v2.
	expectObject(t, a.do("POST", gizmosV2, gizmo("v2", "b", `{"replicas":2,"size":1}`)), "example.com/v2", map[string]int64{"size": 1})
	expectObject(t, a.do("GET", gizmosV1+"/b", ""), "example.com/v1", map[string]int64{"size": 1})
	dry := a.do("POST", gizmosV2+"?dryRun=All", gizmo("v2", "c", `{"replicas":2,"size":4}`))
	expectObject(t, dry, "example.com/v2", map[string]int64{"size": 4})
	a.do("GET", gizmosV1+"/c", "").expect(t, 404)

	for _, version := range []string{"v1", "v2"} {
		path := "/apis/example.com/" + version + "/namespaces/default/gizmos"
		_, items := a.list(path)
		if len(items) != 2 || items["a"].APIVersion != "example.com/"+version || items["b"].APIVersion != "example.com/"+version {
			t.Errorf("list %s: %+v", version, items)
		}
		// kubectl get: a Table of the converted objects.
		a.do("GET", path, "", "Accept: application/json;as=Table;v=v1;g=meta.k8s.io").expect(t, 200, `"kind":"Table"`, `"name":"a"`, `"name":"b"`)
	}

	// Updates of every kind keep the object at v1 in storage and answer at the route's version.
	cur := decodeObject(t, a.do("GET", gizmosV2+"/a", "").body)
	expectObject(t, a.do("PUT", gizmosV2+"/a", `{"apiVersion":"example.com/v2","kind":"Gizmo","metadata":{"name":"a","resourceVersion":"`+cur.Metadata.ResourceVersion+`"},"spec":{"size":5}}`),
		"example.com/v2", map[string]int64{"size": 5})
	expectObject(t, a.do("PATCH", gizmosV2+"/a", `{"spec":{"size":6}}`, "Content-Type: application/merge-patch+json"), "example.com/v2", map[string]int64{"size": 6})
	expectObject(t, a.do("PATCH", gizmosV2+"/d?fieldManager=test", gizmo("v2", "d", `{"size":7}`), "Content-Type: application/apply-patch+yaml"),
		"example.com/v2", map[string]int64{"size": 7})
	expectObject(t, a.do("GET", gizmosV1+"/a", ""), "example.com/v1", map[string]int64{"size": 6})
	expectObject(t, a.do("GET", gizmosV1+"/d", ""), "example.com/v1", map[string]int64{"size": 7})
	// The scale and status subresources of the other version write through the conversion too.
	a.do("PUT", gizmosV2+"/d/scale", `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"d","namespace":"default"},"spec":{"replicas":9}}`).expect(t, 200, `"replicas":9`)
	a.do("GET", gizmosV2+"/d/scale", "").expect(t, 200, `"replicas":9`)
	a.do("PATCH", gizmosV2+"/d/status", `{"status":{"ready":2}}`, "Content-Type: application/merge-patch+json").expect(t, 200, `"apiVersion":"example.com/v2"`, `"ready":2`)
	a.do("GET", gizmosV1+"/d", "").expect(t, 200, `"apiVersion":"example.com/v1"`, `"spec":{"size":9}`, `"status":{"ready":2}`)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rv, _ := a.list(gizmosV2)
	next := a.watchLines(ctx, gizmosV2+"?watch=true&resourceVersion="+rv)
	a.do("POST", gizmosV1, gizmo("v1", "e", `{"size":8}`)).expect(t, 201)
	typ, o, raw := watchEventOf(t, next())
	if typ != "ADDED" || o.APIVersion != "example.com/v2" || o.Metadata.Name != "e" || o.Spec["size"] != 8 || o.Metadata.ResourceVersion == "" {
		t.Errorf("watch v2: %s %s", typ, raw)
	}
	a.do("DELETE", gizmosV2+"/e", "").expect(t, 200)
	if typ, o, raw := watchEventOf(t, next()); typ != "DELETED" || o.APIVersion != "example.com/v2" || o.Metadata.Name != "e" {
		t.Errorf("watch v2: %s %s", typ, raw)
	}
}

// conversionWebhook is the test/conversionwebhook program, running.
type conversionWebhook struct {
	*webhooktest.Process
	url string
	ca  []byte
}

// startConversionWebhook builds and starts test/conversionwebhook as a process of its own, with a
// certificate it makes and a CA it writes for the CRD's caBundle.
func startConversionWebhook(t *testing.T) *conversionWebhook {
	t.Helper()
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	p := webhooktest.Start(t, "github.com/apictl/apictl/test/conversionwebhook", "--ca-file", caFile)
	ca, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	return &conversionWebhook{Process: p, url: p.URL, ca: ca}
}

func TestConversionWebhook(t *testing.T) {
	hook := startConversionWebhook(t)
	a := startWithCRD(t, gizmoCRD(&apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter,
		Webhook: &apiextensionsv1.WebhookConversion{ConversionReviewVersions: []string{"v1"},
			ClientConfig: &apiextensionsv1.WebhookClientConfig{URL: &hook.url, CABundle: hook.ca}}}))

	// v1 objects read as v2: size is replicas there.
	for i, name := range []string{"a", "b", "c"} {
		size := int64(i + 1)
		expectObject(t, a.do("POST", gizmosV1, gizmo("v1", name, `{"size":`+string(rune('1'+i))+`}`)), "example.com/v1", map[string]int64{"size": size})
		expectObject(t, a.do("GET", gizmosV2+"/"+name, ""), "example.com/v2", map[string]int64{"replicas": size})
	}
	before := strings.Count(hook.Log(), "objects=3")
	rv, items := a.list(gizmosV2)
	if len(items) != 3 || items["c"].APIVersion != "example.com/v2" || items["c"].Spec["replicas"] != 3 {
		t.Errorf("list v2: %+v", items)
	}
	if strings.Count(hook.Log(), "review desired=example.com/v2 objects=3") != before+1 {
		t.Errorf("the list was not converted in one ConversionReview:\n%s", hook.Log())
	}
	a.do("GET", gizmosV2, "", "Accept: application/json;as=Table;v=v1;g=meta.k8s.io").expect(t, 200, `"kind":"Table"`, `"name":"c"`)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	next := a.watchLines(ctx, gizmosV2+"?watch=true&resourceVersion="+rv)
	a.do("POST", gizmosV1, gizmo("v1", "d", `{"size":4}`)).expect(t, 201)
	if typ, o, raw := watchEventOf(t, next()); typ != "ADDED" || o.APIVersion != "example.com/v2" || o.Spec["replicas"] != 4 {
		t.Errorf("watch v2: %s %s", typ, raw)
	}

	// v2 writes are stored at v1 and read back at either version.
	expectObject(t, a.do("POST", gizmosV2, gizmo("v2", "e", `{"replicas":9}`)), "example.com/v2", map[string]int64{"replicas": 9})
	expectObject(t, a.do("GET", gizmosV1+"/e", ""), "example.com/v1", map[string]int64{"size": 9})
	cur := decodeObject(t, a.do("GET", gizmosV2+"/a", "").body)
	expectObject(t, a.do("PUT", gizmosV2+"/a", `{"apiVersion":"example.com/v2","kind":"Gizmo","metadata":{"name":"a","resourceVersion":"`+cur.Metadata.ResourceVersion+`"},"spec":{"replicas":10}}`),
		"example.com/v2", map[string]int64{"replicas": 10})
	expectObject(t, a.do("PATCH", gizmosV2+"/b", `{"spec":{"replicas":20}}`, "Content-Type: application/merge-patch+json"), "example.com/v2", map[string]int64{"replicas": 20})
	if typ, o, raw := watchEventOf(t, next()); typ != "ADDED" || o.Metadata.Name != "e" || o.Spec["replicas"] != 9 {
		t.Errorf("watch v2: %s %s", typ, raw)
	}
	want := map[string]int64{"a": 10, "b": 20, "c": 3, "d": 4, "e": 9}
	for name, size := range want {
		expectObject(t, a.do("GET", gizmosV1+"/"+name, ""), "example.com/v1", map[string]int64{"size": size})
	}

	// The webhook goes: the other version fails with a 500 that names it, the storage version still
	// reads, and nothing is lost or changed.
	hook.Stop()
	failed := "conversion webhook for example.com/v1, Kind=Gizmo failed: Post \\\"" + hook.url + "?timeout=30s\\\": dial tcp "
	r := a.do("GET", gizmosV2+"/a", "")
	r.expect(t, 500, `"reason":"InternalError"`,
		`"message":"Internal error occurred: StorageError: corrupt object, Code: 7, Key: /example.com/gizmos/default/a, ResourceVersion: 0, AdditionalErrorMsg: object not decodable revision=`,
		failed)
	a.do("GET", gizmosV2, "").expect(t, 500, failed)
	a.do("PUT", gizmosV2+"/a", `{"apiVersion":"example.com/v2","kind":"Gizmo","metadata":{"name":"a"},"spec":{"replicas":11}}`).expect(t, 500, `"message":"object not decodable revision=`, failed)
	a.do("PATCH", gizmosV2+"/a", `{"spec":{"replicas":12}}`, "Content-Type: application/merge-patch+json").expect(t, 500, failed)
	a.do("DELETE", gizmosV2+"/a", "").expect(t, 500, failed)
	create := a.do("POST", gizmosV2, gizmo("v2", "f", `{"replicas":1}`))
	create.expect(t, 500, `"message":"conversion webhook for example.com/v2, Kind=Gizmo failed: Post \"`+hook.url+`?timeout=30s\": dial tcp `)
	if strings.Contains(create.body, `"reason"`) {
		t.Errorf("kube's Status for a create that does not convert has no reason: %s", create.body)
	}
	watch := a.watchLines(ctx, gizmosV2+"?watch=true&resourceVersion=0")
	if typ, _, raw := watchEventOf(t, watch()); typ != "ERROR" || !strings.Contains(raw, `"code":500`) || !strings.Contains(raw, failed) {
		t.Errorf("watch v2 with the webhook down: %s %s", typ, raw)
	}
	_, items = a.list(gizmosV1)
	if len(items) != len(want) {
		t.Errorf("after the failures, %d objects: %+v", len(items), items)
	}
	for name, size := range want {
		if o := items[name]; o.APIVersion != "example.com/v1" || !equalSpec(o.Spec, map[string]int64{"size": size}) {
			t.Errorf("%s after the failures: %+v", name, o)
		}
	}
	// The storage version still writes.
	expectObject(t, a.do("PATCH", gizmosV1+"/a", `{"spec":{"size":13}}`, "Content-Type: application/merge-patch+json"), "example.com/v1", map[string]int64{"size": 13})
}

// TestConversionInBatches lists more objects than a conversion batch holds (readableBatch) at the
// version they are not stored at: every object comes back converted, in order, once.
func TestConversionInBatches(t *testing.T) {
	a := startWithCRD(t, gizmoCRD(&apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}))
	const n = 600 // more than a batch (readableBatch)
	for i := range n {
		a.do("POST", gizmosV1, gizmo("v1", fmt.Sprintf("g%04d", i), `{"size":`+strconv.Itoa(i)+`}`)).expect(t, 201)
	}
	_, items := a.list(gizmosV2)
	if len(items) != n {
		t.Fatalf("%d items, want %d", len(items), n)
	}
	for i := range n {
		o, ok := items[fmt.Sprintf("g%04d", i)]
		if !ok || o.APIVersion != "example.com/v2" || o.Spec["size"] != int64(i) {
			t.Fatalf("item %d: %+v", i, o)
		}
	}
}
