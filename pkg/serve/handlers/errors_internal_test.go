package handlers

import (
	"errors"
	"net/http"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apictl/apictl/pkg/serve/store"
	"github.com/apictl/apictl/pkg/storage"
)

// A watch cache still filling answers as kube's does since KEP-4568: 429 TooManyRequests, "storage is
// (re)initializing", retry after a second (the Status writer sends it as Retry-After).
func TestAPIErrorInitializing(t *testing.T) {
	err := store.APIError(&storage.StorageError{Code: storage.Initializing, Op: "watch", Key: "configmaps/",
		Err: errors.New("the watch cache is still listing the resource")}, schema.GroupResource{Resource: "configmaps"}, "")
	var se *apierrors.StatusError
	if !errors.As(err, &se) {
		t.Fatalf("%T %v, want a StatusError", err, err)
	}
	s := se.ErrStatus
	if s.Code != http.StatusTooManyRequests || s.Reason != metav1.StatusReasonTooManyRequests ||
		s.Message != "storage is (re)initializing" || s.Details == nil || s.Details.RetryAfterSeconds != 1 {
		t.Errorf("got %+v", s)
	}
}
