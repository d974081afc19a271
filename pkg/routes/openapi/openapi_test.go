package openapi

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/apictl/apictl/internal/golden"
	"github.com/apictl/apictl/pkg/routes"
)

// testAPI is the built-in API plus the CRDs of pkg/routes' test data.
func testAPI(t testing.TB) *routes.API {
	t.Helper()
	api, err := routes.LoadAPI([]string{filepath.Join("..", "testdata", "crds", "valid")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return api
}

func indent(t *testing.T, v any) []byte {
	t.Helper()
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(out, '\n')
}

// TestGolden pins the documents of a small table: reading and patching leases and widgets (with
// their subresources), listing and deleting leases, and the discovery routes of those groups.
func TestGolden(t *testing.T) {
	api := testAPI(t)
	all := routes.Install(api, routes.InstallOptions{})
	var table routes.Table
	for _, r := range all.Routes {
		switch {
		case r.Resource == "leases" && !r.LongRunning && r.Action != routes.ActionPut,
			r.Resource == "widgets" && r.Version == "v1" && (r.Verb == "get" || r.Verb == "patch"),
			!r.IsResource() && (r.Group == "example.com" || r.Group == "coordination.k8s.io" || r.Endpoint == routes.EndpointVersion):
			table.Routes = append(table.Routes, r)
		}
	}
	v2, err := BuildV2(table, api, Options{Version: "v1.0.0-test"})
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "v2.json", string(indent(t, v2)))
	v3, err := BuildV3(table, api, Options{Version: "v1.0.0-test"})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for key, doc := range v3 {
		keys = append(keys, key)
		golden.Check(t, "v3/"+strings.ReplaceAll(key, "/", "_")+".json", string(indent(t, doc)))
	}
	slices.Sort(keys)
	if got := strings.Join(keys, " "); got != "apis/coordination.k8s.io apis/coordination.k8s.io/v1 apis/example.com apis/example.com/v1 apis/example.com/v1beta1 version" {
		t.Errorf("v3 documents %s", got)
	}
}

// TestFieldValidationForKubectl: kubectl --validate=strict looks in /openapi/v3 for a PATCH
// operation with the kind's x-kubernetes-group-version-kind and a fieldValidation query parameter.
func TestFieldValidationForKubectl(t *testing.T) {
	api := testAPI(t)
	docs, err := BuildV3(routes.Install(api, routes.InstallOptions{}), api, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ doc, group, version, kind string }{
		{"api/v1", "", "v1", "ConfigMap"},
		{"api/v1", "", "v1", "Namespace"},
		{"apis/rbac.authorization.k8s.io/v1", "rbac.authorization.k8s.io", "v1", "ClusterRole"},
		{"apis/coordination.k8s.io/v1", "coordination.k8s.io", "v1", "Lease"},
		{"apis/example.com/v1", "example.com", "v1", "Widget"},
		{"apis/example.com/v1beta1", "example.com", "v1beta1", "Gadget"},
	} {
		// Round-trip through JSON, as kubectl reads it.
		raw, err := json.Marshal(docs[tt.doc])
		if err != nil {
			t.Fatal(err)
		}
		var doc spec3.OpenAPI
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		found := false
		for _, p := range doc.Paths.Paths {
			op := p.Patch
			if op == nil {
				continue
			}
			gvk, _ := op.Extensions[extGVK].(map[string]any)
			if gvk["group"] != tt.group || gvk["version"] != tt.version || gvk["kind"] != tt.kind {
				continue
			}
			for _, param := range op.Parameters {
				if param.Name == "fieldValidation" && param.In == "query" {
					found = true
				}
			}
		}
		if !found {
			t.Errorf("%s: no PATCH operation for %s with fieldValidation", tt.doc, tt.kind)
		}
	}
}

// TestTypeConverter: server-side apply builds its type converter from these schemas, for the
// built-in kinds and CRDs, from Models and from the v2 definitions.
func TestTypeConverter(t *testing.T) {
	api := testAPI(t)
	models, err := Models(api)
	if err != nil {
		t.Fatal(err)
	}
	tc, err := managedfields.NewTypeConverter(models, false)
	if err != nil {
		t.Fatalf("NewTypeConverter(Models): %v", err)
	}
	v2, err := BuildV2(routes.Install(api, routes.InstallOptions{}), api, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defs := map[string]*spec.Schema{}
	for name, s := range v2.Definitions {
		defs[name] = &s
	}
	if _, err := managedfields.NewTypeConverter(defs, false); err != nil {
		t.Fatalf("NewTypeConverter(v2 definitions): %v", err)
	}

	obj := func(s string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		if err := json.Unmarshal([]byte(s), &u.Object); err != nil {
			t.Fatal(err)
		}
		return u
	}
	for _, good := range []string{
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","finalizers":["x"],"ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"p","uid":"u"}]},"data":{"k":"v"},"binaryData":{"b":"aGk="}}`,
		`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"r"},"rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["get"]}]}`,
		`{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"l"},"spec":{"holderIdentity":"me","renewTime":"2024-01-01T00:00:00.000000Z"}}`,
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"size":"small","port":8080,"parts":[{"name":"a","count":1},{"name":"b"}],"template":{"anything":true}},"status":{"extra":{"x":1}}}`,
		`{"apiVersion":"example.com/v1beta1","kind":"Gadget","metadata":{"name":"g"},"spec":{"anything":"goes"}}`,
	} {
		if _, err := tc.ObjectToTyped(obj(good)); err != nil {
			t.Errorf("ObjectToTyped(%s): %v", good, err)
		}
	}
	for _, bad := range []string{
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":1}}`,
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"parts":[{"name":"a"},{"name":"a"}]}}`,
	} {
		if _, err := tc.ObjectToTyped(obj(bad)); err == nil {
			t.Errorf("ObjectToTyped(%s) accepted a value the schema forbids", bad)
		}
	}
}

// TestDerivedSchemas checks the reflection rules on the Go types.
func TestDerivedSchemas(t *testing.T) {
	for _, v3 := range []bool{false, true} {
		d, err := newDefinitions(v3)
		if err != nil {
			t.Fatal(err)
		}
		d.define(reflect.TypeFor[corev1.Event]())
		d.define(reflect.TypeFor[metav1.ObjectMeta]())
		d.define(reflect.TypeFor[corev1.ResourceQuota]())
		d.define(reflect.TypeFor[corev1.ServicePort]())
		defs := d.finish()
		prop := func(def, name string) spec.Schema {
			t.Helper()
			s, ok := defs[def]
			if !ok {
				t.Fatalf("no definition %s", def)
			}
			return s.Properties[name]
		}
		meta := "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
		if s := defs["io.k8s.apimachinery.pkg.apis.meta.v1.Time"]; s.Type[0] != "string" || s.Format != "date-time" {
			t.Errorf("Time %+v", s.SchemaProps)
		}
		if p := prop(meta, "finalizers"); p.Extensions[extPatchStrategy] != "merge" || p.Items.Schema.Type[0] != "string" {
			t.Errorf("finalizers %+v", p)
		}
		if p := prop(meta, "ownerReferences"); p.Extensions[extPatchMergeKey] != "uid" {
			t.Errorf("ownerReferences %+v", p.Extensions)
		}
		if p := prop(meta, "labels"); p.AdditionalProperties == nil || p.AdditionalProperties.Schema.Type[0] != "string" {
			t.Errorf("labels %+v", p)
		}
		if req := defs["io.k8s.api.core.v1.Event"].Required; !strings.Contains(strings.Join(req, ","), "involvedObject") || strings.Contains(strings.Join(req, ","), "message") {
			t.Errorf("Event required %v", req)
		}
		if s := defs["io.k8s.api.core.v1.Event"].Description; !strings.HasPrefix(s, "Event is a report") {
			t.Errorf("Event description %q", s)
		}
		q := defs["io.k8s.apimachinery.pkg.api.resource.Quantity"]
		ios := defs["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]
		if v3 {
			if len(q.OneOf) != 2 || q.Type != nil || len(ios.OneOf) != 2 || ios.Format != "int-or-string" {
				t.Errorf("v3 Quantity %+v IntOrString %+v", q.SchemaProps, ios.SchemaProps)
			}
			if p := prop("io.k8s.api.core.v1.Event", "involvedObject"); len(p.AllOf) != 1 || p.Default == nil {
				t.Errorf("v3 struct field %+v", p.SchemaProps)
			}
		} else {
			if q.Type[0] != "string" || len(q.OneOf) != 0 || ios.Format != "int-or-string" {
				t.Errorf("v2 Quantity %+v IntOrString %+v", q.SchemaProps, ios.SchemaProps)
			}
			if p := prop("io.k8s.api.core.v1.Event", "involvedObject"); p.Ref.String() != "#/definitions/io.k8s.api.core.v1.ObjectReference" || p.Description == "" {
				t.Errorf("v2 struct field %+v", p.SchemaProps)
			}
		}
	}
	if got := definitionName(reflect.TypeFor[metav1.ObjectMeta]()); got != "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" {
		t.Errorf("definitionName = %s", got)
	}
}

func TestCustomSchemaV2(t *testing.T) {
	api := testAPI(t)
	v2, err := BuildV2(routes.Install(api, routes.InstallOptions{}), api, Options{})
	if err != nil {
		t.Fatal(err)
	}
	w := v2.Definitions["com.example.v1.Widget"]
	spec := w.Properties["spec"]
	if note := spec.Properties["note"]; note.Type != nil || note.Nullable {
		t.Errorf("nullable note in v2: %+v", note.SchemaProps)
	}
	if tmpl := spec.Properties["template"]; tmpl.Type != nil || tmpl.Properties != nil {
		t.Errorf("preserve-unknown template in v2: %+v", tmpl.SchemaProps)
	}
	if g := v2.Definitions["com.example.v1beta1.Gadget"]; len(g.Properties) != 0 || g.Type[0] != "object" {
		t.Errorf("v1beta1 Gadget preserves unknown fields at the root, v2 publishes an object: %+v", g.SchemaProps)
	}
	if l := v2.Definitions["com.example.v1.WidgetList"]; l.Properties["items"].Items.Schema.Ref.String() != "#/definitions/com.example.v1.Widget" {
		t.Errorf("WidgetList %+v", l)
	}
}

func TestV3Index(t *testing.T) {
	idx := NewV3Index(map[string][]byte{"api/v1": []byte("{}")})
	want := "/openapi/v3/api/v1?hash=27C74670ADB75075FAD058D5CEAF7B20C4E7786C83BAE8A32F626F9782AF34C9A33C2046EF60FD2A7878D378E29FEC851806BBD9A67878F3A9F1CDA4830763FD"
	if got := idx.Paths["api/v1"].ServerRelativeURL; got != want {
		t.Errorf("index URL %s", got)
	}
	out, _ := json.Marshal(idx)
	if !strings.HasPrefix(string(out), `{"paths":{"api/v1":{"serverRelativeURL":"/openapi/v3/api/v1?hash=`) {
		t.Errorf("index %s", out)
	}
}
