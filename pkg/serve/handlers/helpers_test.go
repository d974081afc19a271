package handlers_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/apictl/apictl/internal/servertest"
)

// api is a test server and a plain HTTP client for its insecure port, where every request is a
// superuser's: the tests here are about the REST semantics, not authentication.
type api struct {
	*servertest.Server
	t      *testing.T
	client *http.Client
}

func start(t *testing.T, args ...string) *api {
	t.Helper()
	return newAPI(t, servertest.Start(t, append([]string{"--api-config", "testdata/widgets.yaml"}, args...)...))
}

// newAPI wraps a started server. Its client does not ask for gzip unless a test does: Go's transport
// would ask on every request and decompress out of sight, hiding what the server sent.
func newAPI(t *testing.T, srv *servertest.Server) *api {
	tr := &http.Transport{DisableCompression: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &api{Server: srv, t: t, client: &http.Client{Timeout: 30 * time.Second, Transport: tr}}
}

// response is what a request got.
type response struct {
	code   int
	body   string
	header http.Header
}

// do sends a request with a JSON body (or the Content-Type given in headers, as "Header: value").
func (a *api) do(method, path, body string, headers ...string) response {
	a.t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, a.InsecureURL+path, r)
	if err != nil {
		a.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Set(k, v)
	}
	resp, err := a.client.Do(req)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{code: resp.StatusCode, body: string(b), header: resp.Header}
}

// expect fails the test unless the response has the code and contains every part.
func (r response) expect(t *testing.T, code int, parts ...string) {
	t.Helper()
	if r.code != code {
		t.Errorf("status %d, want %d: %s", r.code, code, r.body)
		return
	}
	for _, p := range parts {
		if !strings.Contains(r.body, p) {
			t.Errorf("body lacks %s:\n%s", p, r.body)
		}
	}
}

// eventually polls cond for up to 20 seconds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 20s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

const cmPath = "/api/v1/namespaces/default/configmaps"

func configMap(name, data string) string {
	return `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `"},"data":` + data + `}`
}
