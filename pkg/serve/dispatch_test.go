package serve

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/apictl/apictl/pkg/routes"
)

func TestDispatchFromTheRouteTable(t *testing.T) {
	ts := startTestServer(t, nil, fakeResources{}, nil)
	c := http.DefaultClient
	base := ts.insecureURL

	t.Run("405 with Allow", func(t *testing.T) {
		code, body, resp := do(t, c, "POST", base+"/api/v1/namespaces/default/configmaps/x", nil, nil)
		if code != 405 || !strings.Contains(body, `"reason":"MethodNotAllowed"`) || resp.Header.Get("Allow") == "" {
			t.Errorf("got %d %s (Allow %q)", code, body, resp.Header.Get("Allow"))
		}
	})
	t.Run("404 outside the table", func(t *testing.T) {
		// kube-apiserver v1.37.2's answers: a Status where its API handlers answer, the mux's text
		// elsewhere, and no body from the OpenAPI handler.
		for p, want := range map[string]string{
			"/api/v1/nopes":                        `"reason":"NotFound"`,
			"/api/v2":                              `"reason":"NotFound"`,
			"/apis/coordination.k8s.io/v2":         `"reason":"NotFound"`,
			"/apis/coordination.k8s.io/v1/nopes":   `"reason":"NotFound"`,
			"/apis/nope.example.com/v1":            "404 page not found\n",
			"/apis/nope.example.com":               "404 page not found\n",
			"/healthz/nope":                        "404 page not found\n",
			"/not/a/path":                          "404 page not found\n",
			"/openapi/v3/apis/nope.example.com/v1": "",
		} {
			code, body, _ := do(t, c, "GET", base+p, nil, nil)
			if code != 404 || !strings.Contains(body, want) || (want == "" && body != "") {
				t.Errorf("%s: %d %q, want 404 with %q", p, code, body, want)
			}
		}
	})
	t.Run("legacy discovery", func(t *testing.T) {
		code, body, resp := do(t, c, "GET", base+"/api/v1", nil, nil)
		if code != 200 || resp.Header.Get("Content-Type") != "application/json" || !strings.Contains(body, `"storageVersionHash":"qFsyl6wFWjQ="`) {
			t.Errorf("/api/v1: %d %s", code, resp.Header.Get("Content-Type"))
		}
		code, body, _ = do(t, c, "GET", base+"/apis", nil, nil)
		if code != 200 || !strings.Contains(body, `"kind":"APIGroupList"`) || !strings.Contains(body, `"name":"coordination.k8s.io"`) {
			t.Errorf("/apis: %d %s", code, body)
		}
	})
	t.Run("aggregated discovery", func(t *testing.T) {
		accept := "application/json;as=APIGroupDiscoveryList;v=v2;g=apidiscovery.k8s.io,application/json"
		code, body, resp := do(t, c, "GET", base+"/apis", nil, map[string]string{"Accept": accept})
		if code != 200 || resp.Header.Get("Content-Type") != routes.MediaAggregatedDiscovery || !strings.Contains(body, `"kind":"APIGroupDiscoveryList"`) {
			t.Fatalf("%d %s %s", code, resp.Header.Get("Content-Type"), body)
		}
		etag := resp.Header.Get("ETag")
		code, _, _ = do(t, c, "GET", base+"/apis", nil, map[string]string{"Accept": accept, "If-None-Match": etag})
		if code != 304 {
			t.Errorf("If-None-Match: %d, want 304", code)
		}
	})
	t.Run("openapi", func(t *testing.T) {
		code, body, _ := do(t, c, "GET", base+"/openapi/v3", nil, nil)
		var index struct {
			Paths map[string]struct{ ServerRelativeURL string }
		}
		if code != 200 || json.Unmarshal([]byte(body), &index) != nil || index.Paths["api/v1"].ServerRelativeURL == "" {
			t.Fatalf("/openapi/v3: %d %.200s", code, body)
		}
		url := index.Paths["api/v1"].ServerRelativeURL
		code, body, resp := do(t, c, "GET", base+url, nil, nil)
		if code != 200 || resp.Header.Get("Cache-Control") != "public, immutable" || !strings.Contains(body, "patchCoreV1NamespacedConfigMap") {
			t.Errorf("%s: %d %s", url, code, resp.Header.Get("Cache-Control"))
		}
		noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		code, _, resp = do(t, noRedirect, "GET", base+"/openapi/v3/api/v1?hash=OLD", nil, nil)
		if code != 301 || resp.Header.Get("Location") != url {
			t.Errorf("outdated hash: %d to %q, want 301 to %q", code, resp.Header.Get("Location"), url)
		}
		if code, body, _ := do(t, c, "GET", base+"/openapi/v2", nil, nil); code != 200 || !strings.Contains(body, `"swagger":"2.0"`) {
			t.Errorf("/openapi/v2: %d", code)
		}
	})
	t.Run("index", func(t *testing.T) {
		code, body, _ := do(t, c, "GET", base+"/", nil, nil)
		for _, p := range []string{`"/api"`, `"/api/v1"`, `"/apis/rbac.authorization.k8s.io/v1"`, `"/healthz/ping"`, `"/readyz/shutdown"`, `"/openapi/v3/"`, `"/version"`} {
			if code != 200 || !strings.Contains(body, p) {
				t.Errorf("index lacks %s", p)
			}
		}
	})
}
