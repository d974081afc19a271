package serve

import (
	"net/http"
	"strings"
	"testing"

	openapiv2 "github.com/google/gnostic-models/openapiv2"
	"google.golang.org/protobuf/proto"

	"github.com/apictl/apictl/pkg/routes"
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

// TestOpenAPIReusesUnchangedDocuments: a new API state rebuilds the v3 documents of the group
// versions that changed and reuses the others' bytes; the index names every document with its hash.
func TestOpenAPIReusesUnchangedDocuments(t *testing.T) {
	builtin := routes.Builtin()
	crds, err := routes.ReadCRDFiles([]string{"../routes/testdata/crds/valid/widgets.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	withCRDs, err := builtin.WithCRDs(crds)
	if err != nil {
		t.Fatal(err)
	}
	table := func(api *routes.API) routes.Table { return routes.Install(api, routes.InstallOptions{}) }
	first := newOpenAPIDocs(table(builtin), builtin, nil, "v1.37.2", nil)
	before, err := first.build()
	if err != nil {
		t.Fatal(err)
	}
	second := newOpenAPIDocs(table(withCRDs), withCRDs, nil, "v1.37.2", first)
	after, err := second.build()
	if err != nil {
		t.Fatal(err)
	}
	if &before.v3["api/v1"][0] != &after.v3["api/v1"][0] {
		t.Error("the core v1 document was rebuilt although nothing of it changed")
	}
	if _, ok := after.v3["apis/example.com/v1"]; !ok {
		t.Errorf("no document for the CRD's group version; have %d documents", len(after.v3))
	}
	// The same API again, from scratch, gives the same bytes: reuse changes nothing that clients see.
	fresh, err := newOpenAPIDocs(table(withCRDs), withCRDs, nil, "v1.37.2", nil).build()
	if err != nil {
		t.Fatal(err)
	}
	if string(fresh.index) != string(after.index) {
		t.Error("the v3 index differs from one built from scratch")
	}
	// A state built from an unbuilt one reuses from the last built state.
	third := newOpenAPIDocs(table(builtin), builtin, nil, "v1.37.2", newOpenAPIDocs(table(builtin), builtin, nil, "v1.37.2", second))
	if third.prev != second {
		t.Error("an unbuilt state was kept as the one to reuse from")
	}
}
