package tables

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/apictl/apictl/pkg/routes"
)

// A golden case is one file under testdata/cases: a YAML header, the objects as YAML documents
// (each after a --- line), then a "=== want" line and the tables the converter must produce, as
// indented JSON. -update rewrites the part after "=== want".
type caseHeader struct {
	// Resource is group/version/resource, or version/resource for the core group.
	Resource string `json:"resource"`
	// Mode is list (the default: a Builder fed every object, and Convert of the same objects as a
	// list, which must agree), object (Convert of the one object) or watch (a Watch converting each
	// object in turn; the tables follow each other).
	Mode          string                     `json:"mode"`
	IncludeObject metav1.IncludeObjectPolicy `json:"includeObject"`
	Version       string                     `json:"version"`
	// List is the metadata a list handler passes to Finish.
	List metav1.ListMeta `json:"list"`
}

const wantMarker = "=== want\n"

func TestGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "cases", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no golden cases under testdata/cases")
	}
	api := testAPI(t)
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			input, want, ok := strings.Cut(string(data), wantMarker)
			if !ok {
				t.Fatalf("%s has no %q line", file, strings.TrimSpace(wantMarker))
			}
			got := runCase(t, api, input)
			if *update {
				if err := os.WriteFile(file, []byte(input+wantMarker+got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if got != want {
				t.Errorf("tables differ from %s (if the change is intended, run go test ./pkg/registry/tables -update)\ngot:\n%s\nwant:\n%s", file, got, want)
			}
		})
	}
}

func runCase(t *testing.T, api *routes.API, input string) string {
	docs := strings.Split(input, "\n---\n")
	var h caseHeader
	if err := yaml.UnmarshalStrict([]byte(docs[0]), &h); err != nil {
		t.Fatalf("case header: %v", err)
	}
	c, res := testConverter(t, api, parseGVR(t, h.Resource))
	var objs []runtime.Object
	for _, doc := range docs[1:] {
		objs = append(objs, decodeObject(t, res, []byte(doc)))
	}
	before := make([]runtime.Object, len(objs))
	for i, o := range objs {
		before[i] = o.DeepCopyObject()
	}
	opts := Options{IncludeObject: h.IncludeObject, Version: h.Version}

	var got string
	switch h.Mode {
	case "", "list":
		b, err := c.NewBuilder(opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			if err := b.Add(o); err != nil {
				t.Fatal(err)
			}
		}
		got = indented(t, b.Finish(h.List))
		list := newList(t, res, h.List, objs)
		fromList, err := c.Convert(list, opts)
		if err != nil {
			t.Fatal(err)
		}
		if l := indented(t, fromList); l != got {
			t.Errorf("Convert of a %T differs from the Builder's table:\n%s", list, l)
		}
	case "object":
		if len(objs) != 1 {
			t.Fatalf("an object case has one object, not %d", len(objs))
		}
		table, err := c.Convert(objs[0], opts)
		if err != nil {
			t.Fatal(err)
		}
		got = indented(t, table)
	case "watch":
		w, err := c.Watch(opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			table, err := w.Convert(o)
			if err != nil {
				t.Fatal(err)
			}
			got += indented(t, table)
		}
	default:
		t.Fatalf("unknown mode %q", h.Mode)
	}
	for i := range objs {
		if !equality.Semantic.DeepEqual(objs[i], before[i]) {
			t.Errorf("object %d was modified by the conversion", i)
		}
	}
	return got
}

func parseGVR(t *testing.T, s string) schema.GroupVersionResource {
	parts := strings.Split(s, "/")
	switch len(parts) {
	case 2:
		return schema.GroupVersionResource{Version: parts[0], Resource: parts[1]}
	case 3:
		return schema.GroupVersionResource{Group: parts[0], Version: parts[1], Resource: parts[2]}
	}
	t.Fatalf("resource %q is not group/version/resource", s)
	return schema.GroupVersionResource{}
}

// newList puts objs in the resource's list type (an UnstructuredList for custom resources), with
// lm as its metadata.
func newList(t *testing.T, res *routes.Resource, lm metav1.ListMeta, objs []runtime.Object) runtime.Object {
	var list runtime.Object
	if res.ListGoType == nil {
		ul := &unstructured.UnstructuredList{Object: map[string]any{}}
		for _, o := range objs {
			ul.Items = append(ul.Items, *o.(*unstructured.Unstructured))
		}
		list = ul
	} else {
		lv := reflect.New(res.ListGoType)
		items := lv.Elem().FieldByName("Items")
		for _, o := range objs {
			items.Set(reflect.Append(items, reflect.ValueOf(o).Elem()))
		}
		list = lv.Interface().(runtime.Object)
	}
	acc, err := meta.ListAccessor(list)
	if err != nil {
		t.Fatal(err)
	}
	acc.SetResourceVersion(lm.ResourceVersion)
	acc.SetContinue(lm.Continue)
	acc.SetRemainingItemCount(lm.RemainingItemCount)
	return list
}

// TestGoldenCasesCoverEveryResource keeps a golden case for every resource of the test API.
func TestGoldenCasesCoverEveryResource(t *testing.T) {
	covered := map[string]bool{}
	files, _ := filepath.Glob(filepath.Join("testdata", "cases", "*.txt"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var h caseHeader
		input, _, _ := bytes.Cut(data, []byte(wantMarker))
		head, _, _ := bytes.Cut(input, []byte("\n---\n"))
		if err := yaml.Unmarshal(head, &h); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		covered[h.Resource] = true
	}
	for _, g := range testAPI(t).Groups() {
		for _, v := range g.Versions {
			for _, r := range v.Resources {
				if r.CreateOnly() {
					continue // never read, never printed
				}
				name := v.Name + "/" + r.Plural
				if g.Name != "" {
					name = g.Name + "/" + name
				}
				if !covered[name] {
					t.Errorf("no golden case under testdata/cases prints %s", name)
				}
			}
		}
	}
}
