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
// failed test, a missing path): NewGenericServerResponse's generic "the server rejected our request
// due to an error in our request" with empty details; kube says nothing more (checked against
// kube-apiserver v1.37.2).
func patchRejected(err error) error {
	return apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false)
}

// unconverted is how kube's handlers answer an error that is not a Status (ErrorToAPIStatus): a 500
// without a reason or details, the error's message as it is.
func unconverted(err error) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure,
		Code: http.StatusInternalServerError, Message: err.Error()}}
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
