package openapi

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// modelName names a kind without a Go type as kube names custom resources: the group reversed,
// the version, the kind (example.com/v1 Widget is com.example.v1.Widget).
func modelName(gvk schema.GroupVersionKind) string {
	group := gvk.Group
	if group == "" {
		group = "core"
	}
	parts := strings.Split(group, ".")
	slices.Reverse(parts)
	return strings.Join(parts, ".") + "." + gvk.Version + "." + gvk.Kind
}

// typeMetaProperty is TypeMeta's apiVersion or kind property.
func typeMetaProperty(name string) spec.Schema {
	return spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"string"}, Description: metav1.TypeMeta{}.SwaggerDoc()[name]}}
}

// metaRef refers to ObjectMeta or ListMeta with a description, as kube's CRD builder does in both
// OpenAPI versions.
func (d *definitions) metaRef(t reflect.Type, description string) spec.Schema {
	ref := d.refSchema(d.define(t))
	if d.v3 {
		// kube's v3 documents wrap a reference that has a description of its own in allOf, where a
		// sibling of $ref would be ignored: kubectl explain <crd>.metadata prints that description.
		return spec.Schema{SchemaProps: spec.SchemaProps{Description: description, AllOf: []spec.Schema{*ref}}}
	}
	ref.Description = description
	return *ref
}

// setObjectProperties gives s the apiVersion, kind and metadata properties of an object, metadata
// referring to ObjectMeta.
func (d *definitions) setObjectProperties(s *spec.Schema) {
	s.SetProperty("apiVersion", typeMetaProperty("apiVersion"))
	s.SetProperty("kind", typeMetaProperty("kind"))
	s.SetProperty("metadata", d.metaRef(reflect.TypeFor[metav1.ObjectMeta](), metav1.PartialObjectMetadata{}.SwaggerDoc()["metadata"]))
}

// customSchema defines the schema of a custom resource's kind from its openAPIV3Schema, the way
// kube's CRD OpenAPI builder does: apiVersion, kind and a metadata reference to ObjectMeta are
// added; in v3 x-kubernetes-int-or-string unfolds to anyOf integer or string; in v2 what v2 cannot
// say (anyOf, oneOf, allOf, not, nullable, arrays without items) is dropped and a root that
// preserves unknown fields becomes a plain object.
func (d *definitions) customSchema(gvk schema.GroupVersionKind, props *apiextensionsv1.JSONSchemaProps) (string, error) {
	name := modelName(gvk)
	if _, ok := d.defs[name]; ok {
		return name, nil
	}
	s := &spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"object"}}}
	if props != nil {
		raw, err := json.Marshal(props)
		if err != nil {
			return "", fmt.Errorf("encoding the schema of %s: %w", gvk, err)
		}
		s = &spec.Schema{}
		if err := json.Unmarshal(raw, s); err != nil {
			return "", fmt.Errorf("reading the schema of %s: %w", gvk, err)
		}
		if !d.v3 && preservesUnknown(s) {
			s = &spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"object"}}}
		} else {
			if d.v3 {
				walk(s, unfoldIntOrString)
			} else {
				walk(s, toV2)
			}
			walk(s, d.addEmbeddedProperties)
			d.setObjectProperties(s)
		}
	}
	d.defs[name] = s
	d.addGVK(name, gvk)
	return name, nil
}

// customListSchema defines the list kind of a custom resource.
func (d *definitions) customListSchema(gvk schema.GroupVersionKind, listKind, plural, itemName string) string {
	name := modelName(gvk.GroupVersion().WithKind(listKind))
	if _, ok := d.defs[name]; ok {
		return name
	}
	items := spec.Schema{SchemaProps: spec.SchemaProps{
		Type:        spec.StringOrArray{"array"},
		Description: fmt.Sprintf("List of %s. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md", plural),
		Items:       &spec.SchemaOrArray{Schema: d.refSchema(itemName)},
	}}
	s := &spec.Schema{SchemaProps: spec.SchemaProps{
		Type:        spec.StringOrArray{"object"},
		Description: fmt.Sprintf("%s is a list of %s", listKind, gvk.Kind),
		Required:    []string{"items"},
	}}
	s.SetProperty("items", items)
	s.SetProperty("metadata", d.metaRef(reflect.TypeFor[metav1.ListMeta](), metav1.PartialObjectMetadataList{}.SwaggerDoc()["metadata"]))
	s.SetProperty("apiVersion", typeMetaProperty("apiVersion"))
	s.SetProperty("kind", typeMetaProperty("kind"))
	d.defs[name] = s
	d.addGVK(name, gvk.GroupVersion().WithKind(listKind))
	return name
}

// walk calls fn on s and every schema below it, parents first.
func walk(s *spec.Schema, fn func(*spec.Schema)) {
	if s == nil {
		return
	}
	fn(s)
	for k, p := range s.Properties {
		walk(&p, fn)
		s.Properties[k] = p
	}
	if s.Items != nil {
		walk(s.Items.Schema, fn)
		for i := range s.Items.Schemas {
			walk(&s.Items.Schemas[i], fn)
		}
	}
	if s.AdditionalProperties != nil {
		walk(s.AdditionalProperties.Schema, fn)
	}
	for _, list := range [][]spec.Schema{s.AllOf, s.AnyOf, s.OneOf} {
		for i := range list {
			walk(&list[i], fn)
		}
	}
	walk(s.Not, fn)
}

func extensionTrue(s *spec.Schema, name string) bool {
	b, ok := s.Extensions.GetBool(name)
	return ok && b
}

func preservesUnknown(s *spec.Schema) bool { return extensionTrue(s, extPreserveUnknown) }

// unfoldIntOrString spells x-kubernetes-int-or-string out for v3 clients.
func unfoldIntOrString(s *spec.Schema) {
	if extensionTrue(s, extIntOrString) && len(s.AnyOf) == 0 && len(s.AllOf) == 0 {
		s.AnyOf = []spec.Schema{
			{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"integer"}}},
			{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"string"}}},
		}
	}
}

// toV2 removes from one schema what OpenAPI v2 (and kubectl's v2 validation) cannot take.
func toV2(s *spec.Schema) {
	s.AllOf, s.AnyOf, s.OneOf, s.Not = nil, nil, nil, nil
	if len(s.Required) > 0 {
		s.Required = slices.DeleteFunc(slices.Clone(s.Required), func(p string) bool {
			prop, ok := s.Properties[p]
			return ok && prop.Nullable
		})
		if len(s.Required) == 0 {
			s.Required = nil
		}
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil && s.AdditionalProperties.Schema.Nullable {
		s.Required = nil
	}
	if s.Nullable {
		s.Type, s.Nullable, s.Items, s.Properties = nil, false, nil, nil
	}
	if preservesUnknown(s) {
		s.Items, s.Properties = nil, nil
		if s.Type.Contains("object") {
			s.Type = nil
		}
	}
	if s.Type.Contains("array") && s.Items == nil {
		s.Type = nil
	}
}

// addEmbeddedProperties gives embedded resources apiVersion, kind and metadata.
func (d *definitions) addEmbeddedProperties(s *spec.Schema) {
	if !extensionTrue(s, extEmbedded) || (!d.v3 && preservesUnknown(s)) {
		return
	}
	d.setObjectProperties(s)
	for _, r := range []string{"kind", "apiVersion"} {
		if !slices.Contains(s.Required, r) {
			s.Required = append(s.Required, r)
		}
	}
}
