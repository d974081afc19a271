package patch

import (
	"errors"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// unsupportedMediaType is kube's 415 for a PATCH body in a media type the endpoint does not take.
func unsupportedMediaType(accepted []string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusUnsupportedMediaType,
		Reason:  metav1.StatusReasonUnsupportedMediaType,
		Message: "the body of the request was in an unknown format - accepted media types include: " + strings.Join(accepted, ", "),
	}}
}

// patchRejected is kube's 422 for a JSON patch whose operations do not apply to the object (a
// failed test, a missing path). kube's message says nothing more; the cause carries the detail,
// which kubectl prints after "The request is invalid".
func patchRejected(err error) error {
	e := apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false)
	e.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: metav1.CauseTypeFieldValueInvalid, Field: "patch", Message: err.Error()}}
	return e
}

// undecodable is kube's 422 for a patched object that no longer decodes into its kind (a string
// where a map belongs).
func undecodable(patched string, err error) error {
	return apierrors.NewInvalid(schema.GroupKind{}, "", field.ErrorList{field.Invalid(field.NewPath("patch"), patched, err.Error())})
}

// internalError wraps an error the client did not cause, keeping StatusErrors as they are, so that
// every error the package returns carries a status.
func internalError(err error) error {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return err
	}
	return apierrors.NewInternalError(err)
}
