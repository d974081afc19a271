package patch

import (
	"encoding/json"
	"flag"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/apictl/apictl/pkg/routes"
)

var update = flag.Bool("update", false, "rewrite golden files with the current output")

// testAPI is the built-in API plus the custom resources of testdata/crds.
func testAPI(t testing.TB) *routes.API {
	t.Helper()
	api, err := routes.LoadAPI([]string{filepath.Join("testdata", "crds")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return api
}

// sharedPatcher builds the test API's Patcher once for the whole test binary; a Patcher is safe for
// concurrent use, which the tests rely on.
var sharedPatcher = sync.OnceValues(func() (*Patcher, error) {
	api, err := routes.LoadAPI([]string{filepath.Join("testdata", "crds")}, nil)
	if err != nil {
		return nil, err
	}
	return New(api)
})

func testPatcher(t testing.TB) *Patcher {
	t.Helper()
	p, err := sharedPatcher()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// parseTarget reads "<apiVersion> <resource>[/<subresource>]": "v1 configmaps",
// "example.com/v1 widgets/status".
func parseTarget(t testing.TB, s string) Target {
	t.Helper()
	apiVersion, resource, ok := strings.Cut(strings.TrimSpace(s), " ")
	if !ok {
		t.Fatalf("target %q: want \"<apiVersion> <resource>[/<subresource>]\"", s)
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		t.Fatalf("target %q: %v", s, err)
	}
	resource, sub, _ := strings.Cut(resource, "/")
	return Target{Resource: gv.WithResource(resource), Subresource: sub}
}

// decode turns YAML or JSON into an object of t's kind, as the handler decodes stored objects.
func decode(t testing.TB, p *Patcher, tg Target, doc string) runtime.Object {
	t.Helper()
	target, err := p.target(tg)
	if err != nil {
		t.Fatal(err)
	}
	js, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatalf("object YAML: %v", err)
	}
	obj := target.newObject()
	if err := json.Unmarshal(js, obj); err != nil {
		t.Fatalf("object %s: %v", js, err)
	}
	return obj
}

// fixedTime is the time test objects carry; managedFields entries that keep it were not touched.
const fixedTime = "2024-01-01T00:00:00Z"

// render prints an object as YAML with the managedFields times the write set replaced by TIME, so
// that output is stable and still shows which entries the write touched.
func render(t testing.TB, obj runtime.Object) string {
	t.Helper()
	js, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(js, &m); err != nil {
		t.Fatal(err)
	}
	if md, ok := m["metadata"].(map[string]any); ok {
		if entries, ok := md["managedFields"].([]any); ok {
			for _, e := range entries {
				if entry, ok := e.(map[string]any); ok && entry["time"] != nil && entry["time"] != fixedTime {
					entry["time"] = "TIME"
				}
			}
		}
	}
	out, err := yaml.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// renderError prints the Status of an error as YAML.
func renderError(t testing.TB, err error) string {
	t.Helper()
	status, ok := err.(apierrors.APIStatus)
	if !ok {
		t.Fatalf("error %v (%T) carries no Status", err, err)
	}
	out, err := yaml.Marshal(status.Status())
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// managers summarizes managedFields as "manager/operation[/subresource]@apiVersion" entries.
func managers(t testing.TB, obj runtime.Object) []string {
	t.Helper()
	m, err := meta.Accessor(obj)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range m.GetManagedFields() {
		s := e.Manager + "/" + string(e.Operation)
		if e.Subresource != "" {
			s += "/" + e.Subresource
		}
		out = append(out, s+"@"+e.APIVersion)
	}
	return out
}

// ownedFields returns the FieldsV1 JSON of manager's entry with operation op, or "" if there is none.
func ownedFields(t testing.TB, obj runtime.Object, manager string, op metav1.ManagedFieldsOperationType) string {
	t.Helper()
	m, err := meta.Accessor(obj)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range m.GetManagedFields() {
		if e.Manager == manager && e.Operation == op && e.FieldsV1 != nil {
			return string(e.FieldsV1.GetRawBytes())
		}
	}
	return ""
}

// stored mimics what the registry and the store do to a new object between steps: a uid and a
// creation time, so that later steps patch an object that exists.
func stored(t testing.TB, obj runtime.Object) runtime.Object {
	t.Helper()
	m, err := meta.Accessor(obj)
	if err != nil {
		t.Fatal(err)
	}
	if m.GetUID() == "" {
		m.SetUID("c0ffee00-0000-4000-8000-000000000001")
		m.SetCreationTimestamp(metav1.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))
	}
	ageManagedFields(obj)
	return obj
}

// agedTime replaces, once an object is stored, the times earlier writes gave its managedFields.
// Entries are sorted by time to the second, then by manager: left at the wall clock, the order
// after a later write would depend on whether the steps straddled a second.
var agedTime = metav1.Date(2024, 1, 1, 0, 0, 1, 0, time.UTC)

// ageManagedFields gives every managedFields entry a write set the same past time, keeping the
// fixed time of the entries no write touched (render tells the two apart).
func ageManagedFields(obj runtime.Object) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	entries := m.GetManagedFields()
	for i := range entries {
		if entries[i].Time != nil && entries[i].Time.UTC().Format(time.RFC3339) != fixedTime {
			entries[i].Time = &agedTime
		}
	}
	m.SetManagedFields(entries)
}
