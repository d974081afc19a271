package openapi

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/kube-openapi/pkg/schemaconv"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/structured-merge-diff/v6/schema"

	"github.com/apictl/apictl/pkg/routes"
)

// TestMarkersAreKubes holds every definition apictl builds from a Go type of k8s.io/api or
// apimachinery to kube's field-manager schema: the same map types (atomic structs), list types and
// list map keys, field by field. These decide what managedFields record (kube's
// f:roleRef: {} for an atomic RoleRef, k:{"name":"x"}: {} for a ServiceAccount's secrets), so a
// definition without kube's markers records different managedFields, and a new built-in kind whose
// types lack them fails here. The markers come from that schema (applySchemaMarkers), so this holds
// the conversion, the patch tags and kubeMarkers to it.
func TestMarkersAreKubes(t *testing.T) {
	models, err := Models(routes.Builtin())
	if err != nil {
		t.Fatal(err)
	}
	ours, err := schemaconv.ToSchemaFromOpenAPI(models, false)
	if err != nil {
		t.Fatalf("converting apictl's models: %v", err)
	}
	kube, err := kubeFieldSchema()
	if err != nil {
		t.Fatal(err)
	}
	compared := 0
	for _, def := range ours.Types {
		want, ok := kube.FindNamedType(def.Name)
		if !ok || ownSchema[def.Name] {
			continue
		}
		compared++
		if got, want := describeAtom(def.Atom), describeAtom(want.Atom); got != want {
			t.Errorf("%s differs from kube's field-manager schema:\ngot  %s\nwant %s", def.Name, got, want)
		}
	}
	// The built-in kinds reach close to a hundred of kube's types; far fewer means the names no
	// longer line up and little was compared.
	if compared < 80 {
		t.Errorf("compared %d definitions with kube's schema, want at least 80", compared)
	}
}

// ownSchema are the types that describe their own schema (OpenAPISchemaType and the like).
// client-go's copy of kube's schema has them in their OpenAPI v2 form, which kube-apiserver's
// field manager, built from its v3 definitions, does not use; none has fields or lists whose
// ownership the markers decide.
var ownSchema = map[string]bool{
	"io.k8s.apimachinery.pkg.util.intstr.IntOrString": true,
	"io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1":   true,
	"io.k8s.apimachinery.pkg.runtime.RawExtension":    true,
}

// TestPublishedMarkers compares the x-kubernetes-map-type, list-type and list-map-keys of every
// definition in apictl's /openapi/v3 documents of the built-in API with kube-apiserver v1.37.2's,
// recorded in testdata/kube-markers-v3.json (from the reference server's /openapi/v3 documents of
// the same group versions, by definition and property; "" is the definition itself).
func TestPublishedMarkers(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "kube-markers-v3.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]map[string]map[string]any
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	api := routes.Builtin()
	docs, err := BuildV3(routes.Install(api, routes.InstallOptions{}), api, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]map[string]any{}
	for _, doc := range docs {
		for name, s := range doc.Components.Schemas {
			got[name] = publishedMarkers(t, s)
		}
	}
	for name, w := range want {
		g, ok := got[name]
		if !ok {
			t.Errorf("apictl publishes no definition %s", name)
			continue
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s:\ngot  %v\nwant %v", name, g, w)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s is not in testdata/kube-markers-v3.json: record its markers from kube-apiserver", name)
		}
	}
}

// publishedMarkers are the list and map markers of s and its properties, in the form of
// testdata/kube-markers-v3.json.
func publishedMarkers(t *testing.T, s *spec.Schema) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	add := func(key string, ext spec.Extensions) {
		m := map[string]any{}
		for _, name := range []string{extMapType, extListType, extListMapKeys} {
			if v, ok := ext[name]; ok {
				// Through JSON, so that lists compare as the recorded ones do.
				raw, err := json.Marshal(v)
				if err != nil {
					t.Fatal(err)
				}
				var back any
				if err := json.Unmarshal(raw, &back); err != nil {
					t.Fatal(err)
				}
				m[name] = back
			}
		}
		if len(m) > 0 {
			out[key] = m
		}
	}
	add("", s.Extensions)
	for name, p := range s.Properties {
		add(name, p.Extensions)
	}
	return out
}

// describeAtom writes the parts of a type that field ownership depends on, in a stable order:
// element relationships, list map keys, the fields and what they refer to. Scalar kinds and
// defaults are left out.
func describeAtom(a schema.Atom) string {
	var b strings.Builder
	writeAtom(&b, a)
	return b.String()
}

func writeAtom(b *strings.Builder, a schema.Atom) {
	switch {
	case a.Map != nil:
		fmt.Fprintf(b, "map[%s]{", a.Map.ElementRelationship)
		fields := slices.Clone(a.Map.Fields)
		slices.SortFunc(fields, func(x, y schema.StructField) int { return strings.Compare(x.Name, y.Name) })
		for i, f := range fields {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(f.Name + ": ")
			writeRef(b, f.Type)
		}
		if a.Map.ElementType != (schema.TypeRef{}) {
			b.WriteString(" *: ")
			writeRef(b, a.Map.ElementType)
		}
		b.WriteString("}")
	case a.List != nil:
		fmt.Fprintf(b, "list[%s", a.List.ElementRelationship)
		if len(a.List.Keys) > 0 {
			fmt.Fprintf(b, " keys=%s", strings.Join(a.List.Keys, ","))
		}
		b.WriteString("](")
		writeRef(b, a.List.ElementType)
		b.WriteString(")")
	case a.Scalar != nil:
		b.WriteString("scalar")
	default:
		b.WriteString("?")
	}
}

func writeRef(b *strings.Builder, r schema.TypeRef) {
	if r.NamedType != nil {
		b.WriteString(*r.NamedType)
		if r.ElementRelationship != nil {
			fmt.Fprintf(b, "(%s)", *r.ElementRelationship)
		}
		return
	}
	writeAtom(b, r.Inlined)
}
