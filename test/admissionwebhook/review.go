package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// webhook answers the reviews and counts them.
type webhook struct {
	log   io.Writer
	mu    sync.Mutex
	calls map[string]*calls
}

// calls are the reviews one path received.
type calls struct {
	Total  int `json:"total"`
	DryRun int `json:"dryRun"`
}

func newWebhook(log io.Writer) *webhook { return &webhook{log: log, calls: map[string]*calls{}} }

func (wh *webhook) routes() http.Handler {
	mux := http.NewServeMux()
	allow := wh.review(func(*http.Request, *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		return &admissionv1.AdmissionResponse{Allowed: true}
	})
	// Webhook URLs may not carry a query: the parameters are path segments.
	mux.HandleFunc("POST /mutate/{label}", wh.review(mutate))
	mux.HandleFunc("POST /deny/{name}/{code}/{message}", wh.review(deny))
	mux.HandleFunc("POST /sleep/{seconds}", wh.review(sleep))
	mux.HandleFunc("POST /allow", allow)
	mux.HandleFunc("POST /allow/{tag}", allow)
	mux.HandleFunc("GET /calls", wh.serveCalls)
	return mux
}

// decide answers one review.
type decide func(*http.Request, *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse

// review decodes an AdmissionReview, counts and logs it, and answers with decide's response.
func (wh *webhook) review(d decide) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var review admissionv1.AdmissionReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
			http.Error(w, fmt.Sprintf("not an AdmissionReview: %v", err), http.StatusBadRequest)
			return
		}
		req := review.Request
		dryRun := req.DryRun != nil && *req.DryRun
		wh.count(r.URL.Path, dryRun)
		fmt.Fprintf(wh.log, "review path=%s operation=%s resource=%s name=%s dryRun=%t\n", r.URL.Path, req.Operation, req.Resource.Resource, req.Name, dryRun)
		resp := d(r, req)
		resp.UID = req.UID
		out := admissionv1.AdmissionReview{TypeMeta: review.TypeMeta, Response: resp}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(&out)
	}
}

func (wh *webhook) count(path string, dryRun bool) {
	wh.mu.Lock()
	defer wh.mu.Unlock()
	c := wh.calls[path]
	if c == nil {
		c = &calls{}
		wh.calls[path] = c
	}
	c.Total++
	if dryRun {
		c.DryRun++
	}
}

func (wh *webhook) serveCalls(w http.ResponseWriter, _ *http.Request) {
	wh.mu.Lock()
	defer wh.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(wh.calls)
}

// mutate adds a label with a JSONPatch and says so in a warning.
func mutate(r *http.Request, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	key, value, ok := strings.Cut(r.PathValue("label"), "=")
	if !ok {
		key, value = "admission-webhook", "mutated"
	}
	var obj struct {
		Metadata struct {
			Labels map[string]string `json:"labels"`
		} `json:"metadata"`
	}
	if len(req.Object.Raw) == 0 {
		return &admissionv1.AdmissionResponse{Allowed: true}
	}
	if err := json.Unmarshal(req.Object.Raw, &obj); err != nil {
		return &admissionv1.AdmissionResponse{Result: &metav1.Status{Code: http.StatusBadRequest, Message: err.Error()}}
	}
	var op any
	if obj.Metadata.Labels == nil {
		op = map[string]any{"op": "add", "path": "/metadata/labels", "value": map[string]string{key: value}}
	} else {
		escaped := strings.NewReplacer("~", "~0", "/", "~1").Replace(key)
		op = map[string]any{"op": "add", "path": "/metadata/labels/" + escaped, "value": value}
	}
	patch, _ := json.Marshal([]any{op})
	pt := admissionv1.PatchTypeJSONPatch
	return &admissionv1.AdmissionResponse{Allowed: true, Patch: patch, PatchType: &pt,
		Warnings: []string{fmt.Sprintf("admissionwebhook added the label %s=%s", key, value)}}
}

// deny refuses the object named by the path.
func deny(r *http.Request, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	name := req.Name
	if name == "" {
		var obj metav1.PartialObjectMetadata
		if json.Unmarshal(req.Object.Raw, &obj) == nil {
			name = obj.Name
		}
	}
	if name != r.PathValue("name") {
		return &admissionv1.AdmissionResponse{Allowed: true}
	}
	code, err := strconv.Atoi(r.PathValue("code"))
	if err != nil {
		code = http.StatusForbidden
	}
	return &admissionv1.AdmissionResponse{Result: &metav1.Status{Code: int32(code), Message: r.PathValue("message")}}
}

// sleep answers after the path's seconds, or when the caller hangs up.
func sleep(r *http.Request, _ *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	s, _ := strconv.ParseFloat(r.PathValue("seconds"), 64)
	t := time.NewTimer(time.Duration(s * float64(time.Second)))
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.Context().Done():
	}
	return &admissionv1.AdmissionResponse{Allowed: true}
}
