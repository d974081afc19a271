package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestReviews(t *testing.T) {
	tests := []struct {
		name, path, object string
		dryRun             bool
		allowed            bool
		patch              string
		code               int32
		message            string
	}{
		{name: "mutate without labels", path: "/mutate/a=b", object: `{"metadata":{"name":"x"}}`, allowed: true,
			patch: `[{"op":"add","path":"/metadata/labels","value":{"a":"b"}}]`},
		{name: "mutate with labels", path: "/mutate/example.com~x/y=z", object: `{"metadata":{"name":"x","labels":{"c":"d"}}}`, allowed: true,
			patch: `[{"op":"add","path":"/metadata/labels/example.com~0x~1y","value":"z"}]`},
		{name: "deny the name", path: "/deny/x/422/no x", object: `{"metadata":{"name":"x"}}`, code: 422, message: "no x"},
		{name: "allow another name", path: "/deny/y/422/no", object: `{"metadata":{"name":"x"}}`, allowed: true},
		{name: "allow", path: "/allow/t", object: `{}`, dryRun: true, allowed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wh := newWebhook(io.Discard)
			review := admissionv1.AdmissionReview{Request: &admissionv1.AdmissionRequest{UID: "u", DryRun: &tt.dryRun,
				Object: runtime.RawExtension{Raw: []byte(tt.object)}}}
			review.APIVersion, review.Kind = "admission.k8s.io/v1", "AdmissionReview"
			body, _ := json.Marshal(review)
			// The mutate label is one path segment: its slash is escaped.
			path := tt.path
			switch tt.name {
			case "mutate with labels":
				path = "/mutate/example.com~x%2Fy=z"
			case "deny the name":
				path = "/deny/x/422/no%20x"
			}
			w := httptest.NewRecorder()
			wh.routes().ServeHTTP(w, httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body)))
			var out admissionv1.AdmissionReview
			if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil || out.Response == nil {
				t.Fatalf("response %d %s: %v", w.Code, w.Body, err)
			}
			r := out.Response
			if r.UID != "u" || r.Allowed != tt.allowed || string(r.Patch) != tt.patch {
				t.Errorf("response %+v, patch %s", r, r.Patch)
			}
			if !tt.allowed && (r.Result == nil || r.Result.Code != tt.code || r.Result.Message != tt.message) {
				t.Errorf("result %+v", r.Result)
			}
			want := 0
			if tt.dryRun {
				want = 1
			}
			if c := wh.calls[tt.path]; c == nil || c.Total != 1 || c.DryRun != want {
				t.Errorf("calls %v", wh.calls)
			}
		})
	}
}
