package openapi

import (
	_ "embed"
	"encoding/json"
	"strings"

	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// admissionregistrationV1 are kube's definitions of k8s.io/api/admissionregistration/v1, as the
// reference server publishes them in OpenAPI v3 (kube/README.md).
//
//go:embed kube/admissionregistration-v1.json
var admissionregistrationV1 []byte

// recordedDefinitions turns definitions recorded from kube's OpenAPI v3 document back into the
// generated form defineGenerated takes: a reference published as {description, default, allOf:
// [$ref]} becomes {description, default, $ref} again, and every reference goes through ref. Data
// that does not parse gives no definitions, and the types are derived by reflection instead.
func recordedDefinitions(data []byte) func(common.ReferenceCallback) map[string]common.OpenAPIDefinition {
	return func(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
		var schemas map[string]spec.Schema
		if err := json.Unmarshal(data, &schemas); err != nil {
			return nil
		}
		out := make(map[string]common.OpenAPIDefinition, len(schemas))
		for name, s := range schemas {
			unpublish(&s, ref)
			out[name] = common.OpenAPIDefinition{Schema: s}
		}
		return out
	}
}

// unpublish undoes the v3 publishing of the schemas inside s.
func unpublish(s *spec.Schema, ref common.ReferenceCallback) {
	for key, prop := range s.Properties {
		unpublishRef(&prop, ref)
		s.Properties[key] = prop
	}
	if s.Items != nil && s.Items.Schema != nil {
		unpublishRef(s.Items.Schema, ref)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		unpublishRef(s.AdditionalProperties.Schema, ref)
	}
}

func unpublishRef(s *spec.Schema, ref common.ReferenceCallback) {
	if len(s.AllOf) == 1 && s.AllOf[0].Ref.String() != "" && s.Ref.String() == "" {
		s.Ref = s.AllOf[0].Ref
		s.AllOf = nil
	}
	if r := s.Ref.String(); r != "" {
		s.Ref = ref(strings.TrimPrefix(r, "#/components/schemas/"))
	}
	unpublish(s, ref)
}
