// Package status writes Kubernetes Status objects, the body of every error the API returns, so that
// kubectl and client-go read our errors as they read kube's.
package status

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Write sends s as JSON with its code as the HTTP status. kind and apiVersion are always set.
func Write(w http.ResponseWriter, s *metav1.Status) {
	s.Kind, s.APIVersion = "Status", "v1"
	writeJSON(w, int(s.Code), s)
}

// WriteError sends err as a Status: an apimachinery StatusError as it is, anything else as a 500
// InternalError whose message is the error's.
func WriteError(w http.ResponseWriter, err error) {
	Write(w, FromError(err))
}

// FromError returns the Status for err.
func FromError(err error) *metav1.Status {
	var se apierrors.APIStatus
	if errors.As(err, &se) {
		s := se.Status()
		if s.Code == 0 {
			s.Code = http.StatusInternalServerError
		}
		return &s
	}
	s := apierrors.NewInternalError(err).Status()
	return &s
}

// WriteWithRetryAfter sends s with a Retry-After header, which client-go honours on 429 and 5xx.
func WriteWithRetryAfter(w http.ResponseWriter, s *metav1.Status, seconds int) {
	w.Header().Set("Retry-After", strconv.Itoa(seconds))
	Write(w, s)
}

// Unauthorized is kube's 401 body.
func Unauthorized() *metav1.Status {
	return &metav1.Status{Status: metav1.StatusFailure, Message: "Unauthorized", Reason: metav1.StatusReasonUnauthorized, Code: http.StatusUnauthorized}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		// A Status always marshals; this guards against a future field that does not.
		http.Error(w, "internal error encoding a Status", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-cache, private")
	w.WriteHeader(code)
	_, _ = w.Write(append(body, '\n'))
}
