package patch

import (
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// strictness collects the unknown and duplicate fields of one request and applies its
// fieldValidation directive to them: Strict fails the request with kube's 400, Warn (the default)
// returns them as warnings, Ignore neither looks for them nor reports them.
type strictness struct {
	directive string
	found     []error
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

// verdict returns the warnings to send, or kube's 400 under Strict.
func (s *strictness) verdict() ([]string, error) {
	if len(s.found) == 0 || !s.enabled() {
		return nil, nil
	}
	if s.directive == metav1.FieldValidationStrict {
		return nil, apierrors.NewBadRequest(runtime.NewStrictDecodingError(s.found).Error())
	}
	warnings := make([]string, len(s.found))
	for i, e := range s.found {
		warnings[i] = e.Error()
	}
	return warnings, nil
}
