package crschema

import (
	"encoding/json"
	"slices"
	"strings"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	openapierrors "k8s.io/kube-openapi/pkg/validation/errors"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/validate"
)

// toOpenAPI is the schema kube-openapi validates against: the structural schema as an OpenAPI schema,
// adjusted as kube adjusts a CRD schema for its validator. x-kubernetes-int-or-string values must be an
// integer or a string, and formats that kube does not support for CRDs are ignored rather than
// enforced (a CRD may say format: my-format; kube only documents it).
func toOpenAPI(s *structuralschema.Structural) *spec.Schema {
	out := s.ToKubeOpenAPI()
	adjustForValidation(out)
	return out
}

func adjustForValidation(s *spec.Schema) {
	if s == nil {
		return
	}
	if intOrString, _ := s.Extensions.GetBool("x-kubernetes-int-or-string"); intOrString {
		s.Type = spec.StringOrArray{"integer", "string"}
	}
	if !supportedFormat(s) {
		s.Format = ""
	}
	for k, p := range s.Properties {
		adjustForValidation(&p)
		s.Properties[k] = p
	}
	if s.AdditionalProperties != nil {
		adjustForValidation(s.AdditionalProperties.Schema)
	}
	if s.Items != nil {
		adjustForValidation(s.Items.Schema)
	}
	for _, list := range [][]spec.Schema{s.AllOf, s.AnyOf, s.OneOf} {
		for i := range list {
			adjustForValidation(&list[i])
		}
	}
	adjustForValidation(s.Not)
}

// supportedFormat reports whether kube validates s's format for custom resources (Kubernetes 1.34 and
// later): the string formats below (compared without dashes, as kube-openapi names them), int32 and
// int64 for integers, float and double for numbers, none for other types.
func supportedFormat(s *spec.Schema) bool {
	if s.Format == "" {
		return true
	}
	typ := ""
	if len(s.Type) == 1 {
		typ = s.Type[0]
	}
	switch typ {
	case "", "string":
		switch strings.ReplaceAll(s.Format, "-", "") {
		case "bsonobjectid", "uri", "email", "hostname", "ipv4", "ipv6", "cidr", "mac",
			"uuid", "uuid3", "uuid4", "uuid5", "isbn", "isbn10", "isbn13", "creditcard", "ssn",
			"hexcolor", "rgbcolor", "byte", "password", "date", "duration", "datetime",
			"k8sshortname", "k8slongname":
			return true
		}
		return false
	case "integer":
		return s.Format == "int32" || s.Format == "int64"
	case "number":
		return s.Format == "float" || s.Format == "double"
	default:
		return false
	}
}

// fieldErrors turns a kube-openapi result into field errors under path, as kube reports custom
// resource validation: Required, NotSupported (enum), TooLong, TooMany and TypeInvalid for the
// matching failures and Invalid with kube-openapi's message for the rest, so that a 422 reads
// `spec.size: Invalid value: "big": spec.size in body must be of type integer: "string"`. kube-openapi
// reports in map order; errors are sorted by path so that messages are stable.
func fieldErrors(path *field.Path, res *validate.Result) field.ErrorList {
	if res == nil || res.IsValid() {
		return nil
	}
	errs := make(field.ErrorList, 0, len(res.Errors))
	for _, err := range res.Errors {
		verr, ok := err.(*openapierrors.Validation)
		if !ok {
			errs = append(errs, field.Invalid(path, "", err.Error()))
			continue
		}
		p := path
		if verr.Name != "" && verr.Name != "." {
			p = p.Child(strings.TrimPrefix(verr.Name, "."))
		}
		errs = append(errs, validationError(p, verr))
	}
	slices.SortStableFunc(errs, func(a, b *field.Error) int { return strings.Compare(a.Field, b.Field) })
	return errs
}

func validationError(p *field.Path, err *openapierrors.Validation) *field.Error {
	value := err.Value
	if value == nil {
		value = ""
	}
	switch err.Code() {
	case openapierrors.RequiredFailCode:
		return field.Required(p, "")
	case openapierrors.EnumFailCode:
		supported := make([]string, 0, len(err.Values))
		for _, v := range err.Values {
			if s, ok := v.(string); ok {
				supported = append(supported, s)
				continue
			}
			js, _ := json.Marshal(v)
			supported = append(supported, string(js))
		}
		return field.NotSupported(p, err.Value, supported)
	case openapierrors.TooLongFailCode:
		return field.TooLong(p, "", int(asInt64(err.Valid)))
	case openapierrors.MaxItemsFailCode, openapierrors.TooManyPropertiesCode:
		return field.TooMany(p, int(asInt64(err.Value)), int(asInt64(err.Valid)))
	case openapierrors.InvalidTypeCode:
		return field.TypeInvalid(p, value, err.Error())
	default:
		return field.Invalid(p, value, err.Error())
	}
}

// asInt64 reads a count kube-openapi reports; -1 when it is not an int64, as kube does.
func asInt64(v any) int64 {
	if i, ok := v.(int64); ok {
		return i
	}
	return -1
}
