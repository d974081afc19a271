package openapi

import (
	"reflect"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	extensionsopenapi "k8s.io/apiextensions-apiserver/pkg/generated/openapi"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	aggregatoropenapi "k8s.io/kube-aggregator/pkg/generated/openapi"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// generatedDefinitions returns kube-openapi's generated definitions for the Go package pkgPath, for
// packages whose schemas cannot be derived by reflection: apiextensions' types carry no SwaggerDoc
// methods, so their descriptions, required fields and list extensions exist only in the generated
// code.
func generatedDefinitions(pkgPath string) (func(common.ReferenceCallback) map[string]common.OpenAPIDefinition, bool) {
	switch pkgPath {
	case reflect.TypeFor[apiextensionsv1.CustomResourceDefinition]().PkgPath():
		return extensionsopenapi.GetOpenAPIDefinitions, true
	case reflect.TypeFor[admissionregistrationv1.ValidatingWebhookConfiguration]().PkgPath():
		// Their generated code is k8s.io/kubernetes's; the definitions are recorded from kube instead.
		return recordedDefinitions(admissionregistrationV1), true
	case reflect.TypeFor[apiregistrationv1.APIService]().PkgPath():
		// kube-aggregator's types carry no SwaggerDoc methods either.
		return aggregatoropenapi.GetOpenAPIDefinitions, true
	}
	return nil, false
}

// defineGenerated defines name, the type t, from its package's generated definitions, in the form
// kube's builders publish them: v2 drops every default, and a reference with a description or a
// default is {description, $ref} in v2 and {description, default, allOf: [$ref]} in v3. The named
// types t refers to are defined too. It reports false when t's package has no generated
// definitions.
func (d *definitions) defineGenerated(name string, t reflect.Type) bool {
	get, ok := generatedDefinitions(t.PkgPath())
	if !ok {
		return false
	}
	if d.generated == nil {
		d.generated = map[string]map[string]common.OpenAPIDefinition{}
	}
	defs, ok := d.generated[t.PkgPath()]
	if !ok {
		defs = get(func(path string) spec.Ref { return d.ref(path) })
		d.generated[t.PkgPath()] = defs
	}
	def, ok := defs[name]
	if !ok {
		return false
	}
	s := def.Schema
	d.publishRefs(&s)
	d.defs[name] = &s
	d.defineReferred(t)
	return true
}

// publishRefs rewrites the properties, items and additional properties of s as kube's builders
// publish generated schemas.
func (d *definitions) publishRefs(s *spec.Schema) {
	for key, prop := range s.Properties {
		d.publishRef(&prop)
		s.Properties[key] = prop
	}
	if s.Items != nil && s.Items.Schema != nil {
		d.publishRef(s.Items.Schema)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		d.publishRef(s.AdditionalProperties.Schema)
	}
}

func (d *definitions) publishRef(s *spec.Schema) {
	d.publishRefs(s)
	if !d.v3 {
		s.Default = nil
		return
	}
	if s.Ref.String() == "" || (s.Description == "" && s.Default == nil) {
		return
	}
	s.AllOf = []spec.Schema{{SchemaProps: spec.SchemaProps{Ref: s.Ref}}}
	s.Ref = spec.Ref{}
}

// defineReferred defines the named types the fields of struct type t refer to, through pointers,
// slices and maps, so that every reference of a generated definition resolves.
func (d *definitions) defineReferred(t reflect.Type) {
	if t.Kind() != reflect.Struct {
		return
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		// Inlined fields (TypeMeta) are properties of t itself, not definitions.
		if !f.IsExported() || f.Anonymous || f.Tag.Get("json") == "-" {
			continue
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice || ft.Kind() == reflect.Map {
			ft = ft.Elem()
		}
		if d.isDefinition(ft) {
			d.define(ft)
		}
	}
}
