// Package status writes Kubernetes Status objects, the body of every error the API returns, so that
// kubectl and client-go read our errors as they read kube's.
package status

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Write sends s as JSON with its code as the HTTP status, indented when r asks for it (Pretty). kind
// and apiVersion are always set.
func Write(w http.ResponseWriter, r *http.Request, s *metav1.Status) {
	WriteAs(w, Pretty(r), s)
}

// WriteAs is Write for a writer that decided on indentation beforehand: one that answers from another
// goroutine than the request's, where reading the request's headers would race with the handler.
func WriteAs(w http.ResponseWriter, pretty bool, s *metav1.Status) {
	s.Kind, s.APIVersion = "Status", "v1"
	// As kube's error writer: a Status that says when to retry says it in the header clients read.
	if s.Details != nil && s.Details.RetryAfterSeconds > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(s.Details.RetryAfterSeconds)))
	}
	writeJSON(w, int(s.Code), pretty, s)
}

// WriteError sends err as a Status: an apimachinery StatusError as it is, anything else as a 500
// InternalError whose message is the error's.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	Write(w, r, FromError(err))
}

// Pretty reports whether a response to r is indented JSON, as kube decides: ?pretty when given, else
// for the user agents of people (curl, Wget and browsers); clients and kubectl get compact JSON.
func Pretty(r *http.Request) bool {
	if r == nil {
		return false
	}
	// Contains first, as kube does: parsing the query costs allocations on every request.
	if strings.Contains(r.URL.RawQuery, "pretty") {
		if p := r.URL.Query().Get("pretty"); p != "" {
			pretty, _ := strconv.ParseBool(p)
			return pretty
		}
	}
	ua := r.Header.Get("User-Agent")
	return strings.HasPrefix(ua, "curl") || strings.HasPrefix(ua, "Wget") || strings.HasPrefix(ua, "Mozilla/5.0")
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
func WriteWithRetryAfter(w http.ResponseWriter, r *http.Request, s *metav1.Status, seconds int) {
	w.Header().Set("Retry-After", strconv.Itoa(seconds))
	Write(w, r, s)
}

// Unauthorized is kube's 401 body.
func Unauthorized() *metav1.Status {
	return &metav1.Status{Status: metav1.StatusFailure, Message: "Unauthorized", Reason: metav1.StatusReasonUnauthorized, Code: http.StatusUnauthorized}
}

func writeJSON(w http.ResponseWriter, code int, pretty bool, v any) {
	var body []byte
	var err error
	// kube's encoder ends compact JSON with a newline and indented JSON without one.
	if pretty {
		body, err = json.MarshalIndent(v, "", "  ")
	} else if body, err = json.Marshal(v); err == nil {
		body = append(body, '\n')
	}
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
	_, _ = w.Write(body)
}
