package status

import (
	"errors"
	"net/http/httptest"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestWrite(t *testing.T) {
	tests := []struct {
		name string
		err  error
		code int
		body string
	}{
		{name: "unauthorized", code: 401,
			body: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}` + "\n"},
		{name: "not found", err: apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, "x"), code: 404,
			body: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \"x\" not found","reason":"NotFound","details":{"name":"x","kind":"configmaps"},"code":404}` + "\n"},
		{name: "plain error", err: errors.New("boom"), code: 500,
			body: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Internal error occurred: boom","reason":"InternalError","details":{"causes":[{"message":"boom"}]},"code":500}` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			if tt.err == nil {
				Write(w, nil, Unauthorized())
			} else {
				WriteError(w, nil, tt.err)
			}
			if w.Code != tt.code || w.Body.String() != tt.body {
				t.Errorf("got %d %s\nwant %d %s", w.Code, w.Body, tt.code, tt.body)
			}
			if ct := w.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q", ct)
			}
		})
	}
}

func TestPretty(t *testing.T) {
	tests := []struct {
		name, query, agent string
		want               bool
	}{
		{name: "kubectl", agent: "kubectl/v1.32.0 (linux/amd64) kubernetes/abc", want: false},
		{name: "client-go", agent: "Go-http-client/2.0", want: false},
		{name: "curl", agent: "curl/8.5.0", want: true},
		{name: "Wget", agent: "Wget/1.21.3", want: true},
		{name: "a browser", agent: "Mozilla/5.0 (X11; Linux x86_64)", want: true},
		{name: "asked", query: "pretty=true", agent: "kubectl/v1.32.0", want: true},
		{name: "asked as 1", query: "pretty=1", want: true},
		{name: "curl says no", query: "pretty=false", agent: "curl/8.5.0", want: false},
		{name: "other query", query: "limit=1", agent: "curl/8.5.0", want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/api?"+tt.query, nil)
			r.Header.Set("User-Agent", tt.agent)
			if got := Pretty(r); got != tt.want {
				t.Errorf("Pretty() = %v, want %v", got, tt.want)
			}
		})
	}
	w := httptest.NewRecorder()
	r := httptest.NewRequest("GET", "/api", nil)
	r.Header.Set("User-Agent", "curl/8.5.0")
	Write(w, r, Unauthorized())
	want := "{\n  \"kind\": \"Status\",\n  \"apiVersion\": \"v1\",\n  \"metadata\": {},\n  \"status\": \"Failure\",\n  \"message\": \"Unauthorized\",\n  \"reason\": \"Unauthorized\",\n  \"code\": 401\n}"
	if w.Body.String() != want {
		t.Errorf("a Status for curl:\n%s\nwant:\n%s", w.Body, want)
	}
}
