package store

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apictl/apictl/pkg/serve/filters"
	"github.com/apictl/apictl/pkg/storage"
)

// apiError turns an error from storage, from a rule, or from reading the request into the API error a
// client expects. Errors that already are API errors pass through.
func APIError(err error, gr schema.GroupResource, name string) error {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return err
	}
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return filters.RequestEntityTooLarge(tooBig.Limit)
	}
	var se *storage.StorageError
	if !errors.As(err, &se) {
		return apierrors.NewInternalError(err)
	}
	switch se.Code {
	case storage.NotFound:
		return apierrors.NewNotFound(gr, name)
	case storage.AlreadyExists:
		return apierrors.NewAlreadyExists(gr, name)
	case storage.Conflict:
		return apierrors.NewConflict(gr, name, errors.New("the object has been modified; please apply your changes to the latest version and try again"))
	case storage.Expired:
		// err's own message: the watch cache's is kube's "too old resource version: N (M)".
		e := apierrors.NewResourceExpired(err.Error())
		e.ErrStatus.ListMeta.Continue = se.Continue
		return e
	case storage.TooLargeResourceVersion:
		e := apierrors.NewTimeoutError(se.Error(), 1)
		e.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: metav1.CauseTypeResourceVersionTooLarge, Message: "Too large resource version"}}
		return e
	case storage.InvalidContinue, storage.Invalid:
		return apierrors.NewBadRequest(se.Error())
	case storage.RequestTooLarge:
		return apierrors.NewRequestEntityTooLargeError(se.Error())
	case storage.NoSpace:
		// kube-apiserver does not interpret etcd's "database space exceeded": its error writer turns an
		// error that is not a Status into a 500 with the error's message and no reason.
		return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusInternalServerError,
			Message: se.Err.Error()}}
	case storage.Initializing:
		return apierrors.NewTooManyRequests("storage is (re)initializing", 1)
	case storage.Unavailable:
		if errors.Is(err, context.DeadlineExceeded) {
			return apierrors.NewTimeoutError(fmt.Sprintf("etcd did not answer in time: %v", se.Err), 1)
		}
		return apierrors.NewServiceUnavailable(fmt.Sprintf("etcd is unavailable: %v", se.Err))
	}
	return apierrors.NewInternalError(err)
}
