package crschema

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// rulesField is the schema extension that holds CEL rules; every error kube's CRD validation reports
// about a rule has it in its field path, except the one for the schema's total cost.
const rulesField = "x-kubernetes-validations"

// ValidateRules checks the x-kubernetes-validations rules of a CRD as kube does when the CRD is created:
// each rule, messageExpression, reason and fieldPath must be valid, rules must compile against the
// schema, oldSelf may only appear where old and new values correlate, and the estimated cost of each
// expression and of the whole schema must stay within kube's budgets. The errors are kube's own, from
// kube's CRD validation run on the defaulted, internal form of the CRD, so their paths are kube's too:
// spec.validation.openAPIV3Schema... when every version has the same schema (kube folds such schemas
// into one), spec.versions[i].schema.openAPIV3Schema... otherwise. Errors about anything but rules are
// left to the rest of the CRD checks. Rules are not checked where kube does not check them: in schemas
// that are not structural.
func ValidateRules(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) field.ErrorList {
	if !hasRules(crd) {
		return nil
	}
	v1 := crd.DeepCopy()
	apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(v1)
	internal := &apiextensions.CustomResourceDefinition{}
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(v1, internal, nil); err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("spec"), fmt.Errorf("converting the CRD to check its validation rules: %w", err))}
	}
	var errs field.ErrorList
	for _, err := range crdvalidation.ValidateCustomResourceDefinition(ctx, internal) {
		if strings.Contains(err.Field, "."+rulesField) || strings.HasPrefix(err.Detail, rulesField+" ") {
			errs = append(errs, err)
		}
	}
	return errs
}

// hasRules reports whether any version of crd has a CEL rule, so that CRDs without rules skip kube's
// (costly) CRD validation.
func hasRules(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, v := range crd.Spec.Versions {
		if v.Schema != nil && schemaHasRules(v.Schema.OpenAPIV3Schema) {
			return true
		}
	}
	return false
}

func schemaHasRules(s *apiextensionsv1.JSONSchemaProps) bool {
	if s == nil {
		return false
	}
	if len(s.XValidations) > 0 {
		return true
	}
	if s.Items != nil {
		if schemaHasRules(s.Items.Schema) {
			return true
		}
		for i := range s.Items.JSONSchemas {
			if schemaHasRules(&s.Items.JSONSchemas[i]) {
				return true
			}
		}
	}
	for _, props := range []map[string]apiextensionsv1.JSONSchemaProps{s.Properties, s.PatternProperties, s.Definitions} {
		for _, p := range props {
			if schemaHasRules(&p) {
				return true
			}
		}
	}
	if s.AdditionalProperties != nil && schemaHasRules(s.AdditionalProperties.Schema) {
		return true
	}
	for _, list := range [][]apiextensionsv1.JSONSchemaProps{s.AllOf, s.OneOf, s.AnyOf} {
		for i := range list {
			if schemaHasRules(&list[i]) {
				return true
			}
		}
	}
	return s.Not != nil && schemaHasRules(s.Not)
}
