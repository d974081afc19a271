package patch

import (
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// strictness collects the unknown and duplicate fields of one request and applies its
// fieldValidation directive to them: Strict fails the request with kube's 400, Warn (the default)
// returns them as warnings, Ignore neither looks for them nor reports them.
type strictness struct {
	directive string
	found     []error
	// quoted is what kube's 422 under Strict quotes as the invalid value of "patch": the patched JSON
	// of a JSON or merge patch, the patch map of a strategic merge patch ("%+v"). Nil for an apply,
	// which kube refuses with a 400.
	quoted *string
}

func newStrictness(fieldValidation string) *strictness {
	if fieldValidation == "" {
		fieldValidation = metav1.FieldValidationWarn
	}
	return &strictness{directive: fieldValidation}
}

// enabled reports whether unknown and duplicate fields are looked for at all.
func (s *strictness) enabled() bool {
	return s.directive == metav1.FieldValidationStrict || s.directive == metav1.FieldValidationWarn
}

func (s *strictness) add(errs ...error) { s.found = append(s.found, errs...) }

// quote sets what a refusal under Strict quotes (see quoted).
func (s *strictness) quote(v string) { s.quoted = &v }

// verdict returns the warnings to send, or under Strict kube's refusal: a 422 Invalid of field
// "patch" quoting the patched object (or the strategic patch), or a 400 for an apply.
func (s *strictness) verdict() ([]string, error) {
	if len(s.found) == 0 || !s.enabled() {
		return nil, nil
	}
	if s.directive == metav1.FieldValidationStrict {
		err := runtime.NewStrictDecodingError(s.found)
		if s.quoted != nil {
			return nil, apierrors.NewInvalid(schema.GroupKind{}, "", field.ErrorList{field.Invalid(field.NewPath("patch"), *s.quoted, err.Error())})
		}
		return nil, apierrors.NewBadRequest(err.Error())
	}
	warnings := make([]string, len(s.found))
	for i, e := range s.found {
		warnings[i] = e.Error()
	}
	return warnings, nil
}
