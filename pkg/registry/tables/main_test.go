package tables

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"reflect"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/apictl/apictl/pkg/routes"
)

var update = flag.Bool("update", false, "rewrite golden files with the current output")

// testNow is the clock of every test: ages in the golden files are measured to it.
var testNow = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

func fixedClock() time.Time { return testNow }

// testAPI is the built-in API plus the CRDs of testdata/crds.yaml.
func testAPI(t testing.TB) *routes.API {
	t.Helper()
	data, err := os.ReadFile("testdata/crds.yaml")
	if err != nil {
		t.Fatal(err)
	}
	crds, err := routes.ParseCRDs("testdata/crds.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	api, err := routes.Builtin().WithCRDs(crds)
	if err != nil {
		t.Fatal(err)
	}
	return api
}

// testConverter returns the converter of a resource of testAPI, named group/version/resource
// (v1/configmaps for the core group).
func testConverter(t testing.TB, api *routes.API, gvr schema.GroupVersionResource) (*Converter, *routes.Resource) {
	t.Helper()
	res, ok := api.Resource(gvr.Group, gvr.Version, gvr.Resource)
	if !ok {
		t.Fatalf("no resource %s in the test API", gvr)
	}
	c, err := New(gvr.GroupVersion(), res, WithClock(fixedClock))
	if err != nil {
		t.Fatal(err)
	}
	return c, res
}

// decodeObject decodes a YAML object as a handler does: into the resource's k8s.io/api type, or
// into an Unstructured with integers kept as int64.
func decodeObject(t testing.TB, res *routes.Resource, doc []byte) runtime.Object {
	t.Helper()
	js, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		t.Fatalf("object is not YAML: %v\n%s", err, doc)
	}
	if res.GoType == nil {
		content := map[string]any{}
		if err := sigsjson.UnmarshalCaseSensitivePreserveInts(js, &content); err != nil {
			t.Fatal(err)
		}
		return &unstructured.Unstructured{Object: content}
	}
	obj := reflect.New(res.GoType).Interface().(runtime.Object)
	strict, err := sigsjson.UnmarshalStrict(js, obj)
	if err != nil || len(strict) > 0 {
		t.Fatalf("object does not decode into %s: %v %v\n%s", res.GoType, err, strict, doc)
	}
	return obj
}

// indented is v as indented JSON, the form of the golden files. Indenting keeps every byte of the
// compact encoding but whitespace, so the comparison is byte for byte.
func indented(t testing.TB, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		t.Fatal(err)
	}
	return b.String() + "\n"
}
