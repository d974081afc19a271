package crconvert_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apictl/apictl/pkg/registry/crconvert"
	"github.com/apictl/apictl/pkg/routes"
)

// gizmos is a CRD with v1 (spec.size, spec.color defaulted to "red") stored and v2 (spec.replicas,
// spec.size) served.
func gizmos(conversion *apiextensionsv1.CustomResourceConversion) *apiextensionsv1.CustomResourceDefinition {
	obj := func(props map[string]apiextensionsv1.JSONSchemaProps) *apiextensionsv1.CustomResourceValidation {
		return &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object",
			Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": {Type: "object", Properties: props}}}}
	}
	red := apiextensionsv1.JSON{Raw: []byte(`"red"`)}
	return &apiextensionsv1.CustomResourceDefinition{
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "gizmos", Singular: "gizmo", Kind: "Gizmo", ListKind: "GizmoList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
				{Name: "v1", Served: true, Storage: true, Schema: obj(map[string]apiextensionsv1.JSONSchemaProps{
					"size": {Type: "integer"}, "color": {Type: "string", Default: &red}})},
				{Name: "v2", Served: true, Schema: obj(map[string]apiextensionsv1.JSONSchemaProps{
					"replicas": {Type: "integer"}, "size": {Type: "integer"}})},
			},
			Conversion: conversion,
		},
	}
}

func newConverter(t testing.TB, crd *apiextensionsv1.CustomResourceDefinition) *crconvert.Converter {
	t.Helper()
	crd.Name = crd.Spec.Names.Plural + "." + crd.Spec.Group
	f, err := crconvert.NewFactory()
	if err != nil {
		t.Fatal(err)
	}
	c, err := f.NewConverter(crd)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func object(t testing.TB, js string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON([]byte(js)); err != nil {
		t.Fatal(err)
	}
	return u
}

func jsonOf(t testing.TB, u *unstructured.Unstructured) string {
	t.Helper()
	b, err := json.Marshal(u.Object)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestNoneDecode(t *testing.T) {
	c := newConverter(t, gizmos(nil)) // no spec.conversion: None, as kube defaults it
	if c.StorageVersion() != "v1" || c.Webhook() {
		t.Fatalf("storage %q webhook %v", c.StorageVersion(), c.Webhook())
	}
	values := [][]byte{
		[]byte(`{"apiVersion":"example.com/v1","kind":"Gizmo","metadata":{"name":"a","namespace":"default"},"spec":{"size":3}}`),
		[]byte(`{"apiVersion":"example.com/v2","kind":"Gizmo","metadata":{"name":"b","namespace":"default"},"spec":{"replicas":2,"size":1}}`),
		// Metadata of the wrong type is dropped on read, and a missing generation repaired, as kube does.
		[]byte(`{"apiVersion":"example.com/v1","kind":"Gizmo","metadata":{"name":"c","namespace":"default","labels":"x"},"spec":{"size":5,"junk":1}}`),
	}
	tests := []struct {
		version string
		want    []string
	}{
		{"v2", []string{
			// Defaults of the stored version (color) are applied before conversion, then the object is
			// pruned to v2's schema, which has no color.
			`{"apiVersion":"example.com/v2","kind":"Gizmo","metadata":{"generation":1,"name":"a","namespace":"default"},"spec":{"size":3}}`,
			`{"apiVersion":"example.com/v2","kind":"Gizmo","metadata":{"generation":1,"name":"b","namespace":"default"},"spec":{"replicas":2,"size":1}}`,
			`{"apiVersion":"example.com/v2","kind":"Gizmo","metadata":{"generation":1,"name":"c","namespace":"default"},"spec":{"size":5}}`,
		}},
		{"v1", []string{
			`{"apiVersion":"example.com/v1","kind":"Gizmo","metadata":{"generation":1,"name":"a","namespace":"default"},"spec":{"color":"red","size":3}}`,
			`{"apiVersion":"example.com/v1","kind":"Gizmo","metadata":{"generation":1,"name":"b","namespace":"default"},"spec":{"size":1}}`,
			`{"apiVersion":"example.com/v1","kind":"Gizmo","metadata":{"generation":1,"name":"c","namespace":"default"},"spec":{"color":"red","size":5}}`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			objs, err := c.Decode(values, tt.version)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, o := range objs {
				got = append(got, jsonOf(t, o))
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestNoneToStorage(t *testing.T) {
	c := newConverter(t, gizmos(&apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}))
	in := object(t, `{"apiVersion":"example.com/v2","kind":"Gizmo","metadata":{"name":"b","namespace":"default"},"spec":{"replicas":3,"size":1}}`)
	before := jsonOf(t, in)
	out, err := c.ToStorage(in)
	if err != nil {
		t.Fatal(err)
	}
	// As kube stores it: pruned to the storage version's schema (replicas is not a v1 field).
	if got, want := jsonOf(t, out), `{"apiVersion":"example.com/v1","kind":"Gizmo","metadata":{"name":"b","namespace":"default"},"spec":{"size":1}}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if jsonOf(t, in) != before {
		t.Errorf("ToStorage changed its input: %s", jsonOf(t, in))
	}
	same := object(t, `{"apiVersion":"example.com/v1","kind":"Gizmo","metadata":{"name":"a"}}`)
	if out, err := c.ToStorage(same); err != nil || out != same {
		t.Errorf("an object at the storage version comes back as it is: %v, %v", out, err)
	}
	if _, err := c.Convert(in, "v9"); err == nil || err.Error() != "request to convert CR to an invalid group/version: example.com/v9" {
		t.Errorf("unknown version: %v", err)
	}
}

func TestAtVersion(t *testing.T) {
	c := newConverter(t, gizmos(nil))
	tests := []struct {
		value   string
		version string
		want    bool
	}{
		{`{"apiVersion":"example.com/v1","kind":"Gizmo"}`, "v1", true},
		{`{"apiVersion":"example.com/v1","kind":"Gizmo"}`, "v2", false},
		{`{"apiVersion":"example.com/v10","kind":"Gizmo"}`, "v1", false},
		{`{"aaa":1,"apiVersion":"example.com/v1"}`, "v1", false}, // decode to know
		{`{"apiVersion":"example.com/v1"}`, "v3", false},
	}
	for _, tt := range tests {
		if got := c.AtVersion([]byte(tt.value), tt.version); got != tt.want {
			t.Errorf("AtVersion(%s, %s) = %v, want %v", tt.value, tt.version, got, tt.want)
		}
	}
}

func TestSet(t *testing.T) {
	one := gizmos(nil)
	one.Name = "gizmos.example.com"
	one.Spec.Versions = one.Spec.Versions[:1]
	two := gizmos(nil)
	two.Name, two.Spec.Names.Plural = "gadgets.example.com", "gadgets"
	f, err := crconvert.NewFactory()
	if err != nil {
		t.Fatal(err)
	}
	set, err := f.NewSet([]routes.CRD{{Definition: one}, {Definition: two}})
	if err != nil {
		t.Fatal(err)
	}
	if set.For(schema.GroupResource{Group: "example.com", Resource: "gizmos"}) != nil {
		t.Error("a single-version CRD needs no converter")
	}
	if set.For(schema.GroupResource{Group: "example.com", Resource: "gadgets"}) == nil {
		t.Error("no converter for a CRD with two versions")
	}
	var none *crconvert.Set
	if none.For(schema.GroupResource{Group: "example.com", Resource: "gadgets"}) != nil {
		t.Error("a nil Set holds nothing")
	}
}
