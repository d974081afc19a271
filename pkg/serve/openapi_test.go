package serve

import (
	"net/http"
	"strings"
	"testing"

	openapiv2 "github.com/google/gnostic-models/openapiv2"
	"google.golang.org/protobuf/proto"
)

// TestOpenAPIV2Negotiation pins kube-openapi's answers on /openapi/v2 (checked against kube-apiserver
// v1.37.2): protobuf when asked first, JSON otherwise, and a bare 406 when neither is acceptable.
func TestOpenAPIV2Negotiation(t *testing.T) {
	ts := startTestServer(t, nil, fakeResources{}, nil)
	const protoType = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
	tests := []struct {
		accept      string
		code        int
		contentType string
	}{
		{"", 200, "application/json"},
		{"application/json", 200, "application/json"},
		{"application/com.github.proto-openapi.spec.v2@v1.0+protobuf", 200, protoType},
		{"application/com.github.proto-openapi.spec.v2.v1.0+protobuf, application/json", 200, protoType},
		{"application/json;q=0.5, application/com.github.proto-openapi.spec.v2@v1.0+protobuf", 200, protoType},
		{"application/*", 200, "application/json"},
		{"text/html", 406, ""},
	}
	var jsonETag string
	for _, tt := range tests {
		t.Run(tt.accept, func(t *testing.T) {
			code, body, resp := do(t, http.DefaultClient, "GET", ts.insecureURL+"/openapi/v2", nil, map[string]string{"Accept": tt.accept})
			if code != tt.code || resp.Header.Get("Content-Type") != tt.contentType || resp.Header.Get("Vary") != "Accept" {
				t.Fatalf("%d %q (Vary %q), want %d %q", code, resp.Header.Get("Content-Type"), resp.Header.Get("Vary"), tt.code, tt.contentType)
			}
			switch tt.contentType {
			case protoType:
				var doc openapiv2.Document
				if err := proto.Unmarshal([]byte(body), &doc); err != nil || doc.Swagger != "2.0" || doc.Paths == nil {
					t.Errorf("the protobuf document does not decode: %v (swagger %q)", err, doc.Swagger)
				}
			case "application/json":
				if !strings.Contains(body, `"swagger":"2.0"`) {
					t.Errorf("not the JSON document: %.100s", body)
				}
				jsonETag = resp.Header.Get("ETag")
			case "":
				if body != "" {
					t.Errorf("406 with a body: %q", body)
				}
			}
		})
	}
	// One ETag for both encodings, as kube-openapi has (Vary: Accept tells caches apart).
	code, _, _ := do(t, http.DefaultClient, "GET", ts.insecureURL+"/openapi/v2", nil,
		map[string]string{"Accept": "application/com.github.proto-openapi.spec.v2@v1.0+protobuf", "If-None-Match": jsonETag})
	if code != http.StatusNotModified {
		t.Errorf("If-None-Match with the JSON ETag on protobuf: %d, want 304", code)
	}
}
