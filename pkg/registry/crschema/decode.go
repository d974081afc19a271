package crschema

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kjson "sigs.k8s.io/json"
)

// DecodeBody decodes the JSON body of a create or update (convert YAML bodies to JSON first) the way kube
// decodes a custom resource, and applies the fieldValidation directive (the query parameter, already
// checked to be "", Ignore, Warn or Strict; "" means Warn, as in kube):
//
//   - Ignore: unknown fields are pruned silently;
//   - Warn: each unknown or duplicate field is a warning, to send as a Warning header:
//     `unknown field "spec.foo"`, `duplicate field "spec.size"`;
//   - Strict: any of them is kube's 400, `Widget in version "v1" cannot be handled as a Widget: strict
//     decoding error: unknown field "spec.foo", unknown field "spec.bar"`.
//
// The object comes back pruned and defaulted (see Coerce). Errors are *StatusError values: 400 for JSON
// that is not an object, a missing kind, metadata of the wrong shape, strict decoding errors and an
// apiVersion other than the validator's (`the API version in the data (example.com/v2) does not match
// the expected API version (example.com/v1)`). A wrong kind is left for Validate (422).
func (v *Validator) DecodeBody(data []byte, directive string) (*unstructured.Unstructured, []string, error) {
	strict := reportsUnknown(directive)
	head, err := interpret(data)
	if err != nil {
		return nil, nil, v.unrecognized(err, data)
	}
	obj, decodeErrs, err := decodeObject(data, strict)
	if err != nil {
		// A fatal decoding error names the kind and version with the path's filled in.
		return nil, nil, v.cannotHandle(withDefaults(head, v.gvk), err)
	}
	if obj.GetKind() == "" {
		missing := runtime.NewMissingKindErr(string(data))
		if !strict {
			return nil, nil, v.cannotHandle(withDefaults(head, v.gvk), missing)
		}
		return nil, nil, v.unrecognized(missing, data)
	}
	unknown, err := v.Coerce(obj, strict)
	if err != nil {
		return nil, nil, v.cannotHandle(obj.GroupVersionKind(), err)
	}
	strictErrs := append(decodeErrs, unknownFieldErrors(unknown)...)
	var warnings []string
	if len(strictErrs) > 0 && strict {
		if fieldValidation(directive) == metav1.FieldValidationStrict {
			return nil, nil, v.cannotHandle(obj.GroupVersionKind(), runtime.NewStrictDecodingError(strictErrs))
		}
		warnings = messages(strictErrs)
	}
	if gv := obj.GroupVersionKind().GroupVersion(); gv != v.gvk.GroupVersion() {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%v)", gv, v.gvk.GroupVersion()))
	}
	return obj, warnings, nil
}

// DecodePatched decodes the result of applying a JSON patch or JSON merge patch to the stored object, as
// kube does for custom resources. patchStrictErrs are the strict errors found in the patch itself
// (duplicate fields), which come first. Under Warn every strict error is a warning; under Strict they
// are kube's 422 for patches, ` "" is invalid: patch: Invalid value: "<patched object>": strict
// decoding error: unknown field "spec.foo"`; so is a patched object that cannot be decoded at all.
func (v *Validator) DecodePatched(patched []byte, patchStrictErrs []error, directive string) (*unstructured.Unstructured, []string, error) {
	strict := reportsUnknown(directive)
	obj, decodeErrs, err := decodeObject(patched, strict)
	if err == nil && obj.GetKind() == "" {
		err = runtime.NewMissingKindErr(string(patched))
	}
	if err != nil {
		return nil, nil, invalidPatch(patched, err)
	}
	unknown, err := v.Coerce(obj, strict)
	if err != nil {
		return nil, nil, invalidPatch(patched, err)
	}
	if !strict {
		return obj, nil, nil
	}
	strictErrs := append(append(append([]error(nil), patchStrictErrs...), decodeErrs...), unknownFieldErrors(unknown)...)
	if len(strictErrs) == 0 {
		return obj, nil, nil
	}
	if fieldValidation(directive) == metav1.FieldValidationStrict {
		return nil, nil, invalidPatch(patched, runtime.NewStrictDecodingError(strictErrs))
	}
	return obj, messages(strictErrs), nil
}

// DecodeStored decodes an object read from storage the way kube does on every read: an object stored
// at another version of the same CRD is converted (kube's None strategy: only apiVersion changes),
// unknown fields are pruned, metadata fields of the wrong type are dropped rather than rejected, a
// missing generation becomes 1, and defaults are applied, so that fields added to the schema with a
// default appear in objects written before. Splice the resourceVersion in before or after.
func (v *Validator) DecodeStored(data []byte) (*unstructured.Unstructured, error) {
	obj, _, err := decodeObject(data, false)
	if err != nil {
		return nil, fmt.Errorf("decoding a stored %s: %w", v.gvk.Kind, err)
	}
	if gvk := obj.GroupVersionKind(); gvk.Group == v.gvk.Group && gvk.Kind == v.gvk.Kind && gvk.Version != v.gvk.Version {
		obj.SetAPIVersion(v.gvk.GroupVersion().String())
	}
	if _, err := v.coerce(obj.Object, coerceMode{dropInvalid: true, repairGeneration: true}); err != nil {
		return nil, fmt.Errorf("decoding a stored %s: %w", v.gvk.Kind, err)
	}
	return obj, nil
}

// fieldValidation is the directive in force: Warn when none is given.
func fieldValidation(directive string) string {
	if directive == "" {
		return metav1.FieldValidationWarn
	}
	return directive
}

// reportsUnknown says whether the directive asks for unknown fields (kube's strict decoder).
func reportsUnknown(directive string) bool {
	d := fieldValidation(directive)
	return d == metav1.FieldValidationWarn || d == metav1.FieldValidationStrict
}

// typeHead is what kube reads first from any body: apiVersion and kind. Its shape, tags included, is
// kube's, because encoding/json names the type in its errors.
type typeHead = struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
}

func interpret(data []byte) (schema.GroupVersionKind, error) {
	var head typeHead
	if err := json.Unmarshal(data, &head); err != nil {
		return schema.GroupVersionKind{}, fmt.Errorf("couldn't get version/kind; json parse error: %w", err)
	}
	gv, err := schema.ParseGroupVersion(head.APIVersion)
	if err != nil {
		return schema.GroupVersionKind{}, err
	}
	return gv.WithKind(head.Kind), nil
}

// withDefaults fills in the kind and version a body left out from the path's, as kube's decoder does.
func withDefaults(actual, defaults schema.GroupVersionKind) schema.GroupVersionKind {
	if actual.Kind == "" {
		actual.Kind = defaults.Kind
	}
	if actual.Version == "" && actual.Group == "" {
		actual.Group, actual.Version = defaults.Group, defaults.Version
	}
	if actual.Version == "" && actual.Group == defaults.Group {
		actual.Version = defaults.Version
	}
	return actual
}

// decodeObject decodes a JSON object, integers as int64. With strict, duplicate fields are returned as
// strict errors (`duplicate field "spec.size"`); the last value wins either way.
func decodeObject(data []byte, strict bool) (*unstructured.Unstructured, []error, error) {
	var m map[string]any
	var strictErrs []error
	var err error
	if strict {
		strictErrs, err = kjson.UnmarshalStrict(data, &m)
	} else {
		err = kjson.UnmarshalCaseSensitivePreserveInts(data, &m)
	}
	if err != nil {
		return nil, nil, err
	}
	if m == nil {
		m = map[string]any{}
	}
	return &unstructured.Unstructured{Object: m}, strictErrs, nil
}

func unknownFieldErrors(paths []string) []error {
	errs := make([]error, len(paths))
	for i, p := range paths {
		errs[i] = errors.New(`unknown field "` + p + `"`)
	}
	return errs
}

func messages(errs []error) []string {
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = e.Error()
	}
	return out
}

// cannotHandle is kube's 400 for a body it could read the kind of but not decode.
func (v *Validator) cannotHandle(gvk schema.GroupVersionKind, err error) error {
	return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", gvk.Kind, gvk.Version, v.gvk.Kind, err))
}

// unrecognized is kube's 400 for a body whose kind it could not read.
func (v *Validator) unrecognized(err error, data []byte) error {
	return Unrecognized(v.gvk.Kind, err, data)
}

// Unrecognized is kube's 400 for a body that does not decode as an object of kind, built-in or
// custom, quoting the start of the body.
func Unrecognized(kind string, err error, data []byte) error {
	return apierrors.NewBadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type %s): %v (%s)", kind, err, summarize(data, 30)))
}

// summarize is how kube quotes a body in an error: JSON objects as text, anything else in hex, cut at max
// bytes.
func summarize(data []byte, max int) string {
	switch {
	case len(data) == 0:
		return "<empty>"
	case data[0] == '{':
		if len(data) > max {
			return string(data[:max]) + " ..."
		}
		return string(data)
	default:
		if len(data) > max {
			return hex.EncodeToString(data[:max]) + " ..."
		}
		return hex.EncodeToString(data)
	}
}

// invalidPatch is kube's 422 for a patch whose result cannot be used.
func invalidPatch(patched []byte, err error) error {
	return apierrors.NewInvalid(schema.GroupKind{}, "", field.ErrorList{field.Invalid(field.NewPath("patch"), string(patched), err.Error())})
}
