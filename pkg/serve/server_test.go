package serve

//lint:file-ignore SA1019 the test drives x/net/http2's transport on purpose

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"github.com/apictl/apictl/pkg/routes"
	"github.com/apictl/apictl/pkg/serve/auth"
	"github.com/apictl/apictl/pkg/serve/dynamiccert"
	"github.com/apictl/apictl/pkg/serve/healthz"
)

// testServer is a running server with clients for its two listeners.
type testServer struct {
	*PreparedServer
	pki         *testPKI
	secureURL   string
	insecureURL string
	cancel      context.CancelFunc
	done        chan error
	logs        *syncBuffer
}

// fakeResources serves the built-in API's resource routes from handlers keyed by object name
// ("" for collections), so tests can make a request panic, block or stream.
type fakeResources map[string]http.HandlerFunc

func (f fakeResources) ServeResource(w http.ResponseWriter, r *http.Request, route *routes.Route, p routes.Params) {
	if h, ok := f[p.Name]; ok {
		h(w, r)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// objectURL is the path of a configmap in the default namespace.
func objectURL(name string) string { return "/api/v1/namespaces/default/configmaps/" + name }

// startTestServer runs a server on 127.0.0.1 port-0 listeners, serving the built-in API's routes
// from resources. prepare may register hooks before the server is prepared.
func startTestServer(t *testing.T, modify func(*Config), resources fakeResources, prepare func(*Server)) *testServer {
	t.Helper()
	pki := newTestPKI(t)
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cert, err := dynamiccert.NewServingCert(pki.certFile, pki.keyFile, log)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := dynamiccert.NewCABundle(pki.caFile, log)
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := auth.ParseTokens(strings.NewReader("alice-token,alice,1,dev\nroot-token,root,2,system:masters\n"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{
		Logger:              log,
		RequestTimeout:      5 * time.Second,
		MaxRequestBodyBytes: 1024,
		ShutdownTimeout:     5 * time.Second,
		SecureServing: &SecureServingInfo{
			Listener: listen(t), Cert: cert, ClientCA: ca, HTTP2MaxStreamsPerConnection: 250,
		},
		InsecureServing: &InsecureServingInfo{Listener: listen(t)},
		Authentication:  auth.Union(nil, &auth.ClientCert{Roots: ca.Pool}, tokens),
		Authorization:   auth.Chain(auth.AlwaysAllow),
		Notify:          func(string) error { return nil },
		API:             routes.Builtin(),
		Resources:       resources,
	}
	if modify != nil {
		modify(&cfg)
	}
	s, err := cfg.Complete().New()
	if err != nil {
		t.Fatal(err)
	}
	if prepare != nil {
		prepare(s)
	}
	ts := &testServer{
		PreparedServer: s.PrepareRun(),
		pki:            pki,
		secureURL:      "https://" + cfg.SecureServing.Listener.Addr().String(),
		insecureURL:    "http://" + cfg.InsecureServing.Listener.Addr().String(),
		done:           make(chan error, 1),
		logs:           logs,
	}
	ctx, cancel := context.WithCancel(context.Background())
	ts.cancel = cancel
	go func() { ts.done <- ts.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-ts.done:
		case <-time.After(20 * time.Second):
			t.Error("server did not stop within 20s")
		}
	})
	select {
	case <-ts.Ready():
	case err := <-ts.done:
		t.Fatalf("server stopped before it was ready: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("server not ready within 10s")
	}
	return ts
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// client returns an HTTPS client trusting the test CA, presenting cert if given.
func (ts *testServer) client(cert *tls.Certificate) *http.Client {
	cfg := &tls.Config{RootCAs: ts.pki.roots()}
	if cert != nil {
		cfg.Certificates = []tls.Certificate{*cert}
	}
	tr := &http.Transport{TLSClientConfig: cfg, ForceAttemptHTTP2: true}
	_ = http2.ConfigureTransport(tr)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// do sends a request and returns code, body and the response.
func do(t *testing.T, c *http.Client, method, url string, body io.Reader, header map[string]string) (int, string, *http.Response) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp
}

// syncBuffer is a log sink that tests may read while the server writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestEndpointsOutsideTheAPI(t *testing.T) {
	ts := startTestServer(t, nil, nil, nil)
	admin := ts.client(&ts.pki.adminCert)
	tests := []struct {
		name   string
		client *http.Client
		url    string
		code   int
		body   string
	}{
		{name: "insecure healthz", client: http.DefaultClient, url: ts.insecureURL + "/healthz", code: 200, body: "ok"},
		{name: "anonymous is refused", client: ts.client(nil), url: ts.secureURL + "/readyz?verbose", code: 401,
			body: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}` + "\n"},
		{name: "admin reads verbose readyz", client: admin, url: ts.secureURL + "/readyz?verbose", code: 200,
			body: "[+]ping ok\n[+]log ok\n[+]shutdown ok\nreadyz check passed\n"},
		{name: "individual check", client: admin, url: ts.secureURL + "/livez/ping", code: 200, body: "ok"},
		{name: "unknown path", client: admin, url: ts.secureURL + "/nope", code: 404, body: "404 page not found\n"},
		{name: "unknown API path", client: admin, url: ts.secureURL + "/api/v1/nopes", code: 404,
			body: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server could not find the requested resource","reason":"NotFound","details":{},"code":404}` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body, _ := do(t, tt.client, "GET", tt.url, nil, nil)
			if code != tt.code || body != tt.body {
				t.Errorf("got %d %q, want %d %q", code, body, tt.code, tt.body)
			}
		})
	}

	code, body, resp := do(t, admin, "GET", ts.secureURL+"/version", nil, nil)
	var v map[string]string
	if code != 200 || json.Unmarshal([]byte(body), &v) != nil || v["gitVersion"] == "" || !strings.Contains(body, "\n  \"major\"") {
		t.Errorf("/version: %d %q", code, body)
	}
	if resp.ProtoMajor != 2 {
		t.Errorf("TLS clients should get HTTP/2, got %s", resp.Proto)
	}
	code, body, _ = do(t, http.DefaultClient, "GET", ts.insecureURL+"/", nil, nil)
	for _, p := range []string{`"/healthz"`, `"/livez"`, `"/metrics"`, `"/readyz"`, `"/version"`} {
		if code != 200 || !strings.Contains(body, p) {
			t.Errorf("index lacks %s: %d %s", p, code, body)
		}
	}
	code, body, _ = do(t, http.DefaultClient, "GET", ts.insecureURL+"/metrics", nil, nil)
	if code != 200 || !strings.Contains(body, `apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="",scope="",subresource="",verb="GET",version=""}`) {
		t.Errorf("/metrics lacks the request counter: %d", code)
	}
}

func TestErrorStatuses(t *testing.T) {
	ts := startTestServer(t, func(c *Config) {
		c.RequestTimeout = 200 * time.Millisecond
		c.Authorization = auth.Chain(auth.AlwaysDeny)
	}, fakeResources{
		"panic": func(http.ResponseWriter, *http.Request) { panic("boom") },
		"slow": func(w http.ResponseWriter, _ *http.Request) {
			time.Sleep(time.Second)
			_, _ = w.Write([]byte("late"))
		},
		"body": func(w http.ResponseWriter, r *http.Request) {
			if _, err := io.ReadAll(r.Body); err != nil {
				w.WriteHeader(http.StatusRequestEntityTooLarge)
			}
		},
	}, nil)
	root := ts.client(nil)
	bearer := func(token string) map[string]string { return map[string]string{"Authorization": "Bearer " + token} }

	t.Run("403", func(t *testing.T) {
		code, body, _ := do(t, root, "GET", ts.secureURL+"/api/v1/namespaces/default/configmaps", nil, bearer("alice-token"))
		want := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps is forbidden: User \"alice\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"default\": Everything is forbidden.","reason":"Forbidden","details":{"kind":"configmaps"},"code":403}` + "\n"
		if code != 403 || body != want {
			t.Errorf("got %d %s\nwant %s", code, body, want)
		}
		code, body, _ = do(t, root, "GET", ts.secureURL+"/version", nil, bearer("alice-token"))
		if code != 403 || !strings.Contains(body, `"message":"forbidden: User \"alice\" cannot get path \"/version\": Everything is forbidden."`) {
			t.Errorf("non-resource: %d %s", code, body)
		}
	})
	t.Run("401 for a wrong token", func(t *testing.T) {
		code, body, _ := do(t, root, "GET", ts.secureURL+"/version", nil, bearer("wrong"))
		if code != 401 || !strings.Contains(body, `"reason":"Unauthorized"`) {
			t.Errorf("got %d %s", code, body)
		}
	})
	t.Run("500 on panic, and the server lives on", func(t *testing.T) {
		code, body, _ := do(t, root, "GET", ts.secureURL+objectURL("panic"), nil, bearer("root-token"))
		if code != 500 || !strings.Contains(body, `"reason":"InternalError"`) || !strings.Contains(body, panicText) {
			t.Errorf("got %d %s", code, body)
		}
		if code, _, _ := do(t, root, "GET", ts.secureURL+"/healthz", nil, bearer("root-token")); code != 200 {
			t.Errorf("server unhealthy after a panic: %d", code)
		}
	})
	t.Run("504", func(t *testing.T) {
		code, body, _ := do(t, root, "GET", ts.secureURL+objectURL("slow"), nil, bearer("root-token"))
		if code != 504 || !strings.Contains(body, `"message":"Timeout: request did not complete within the allotted timeout","reason":"Timeout","details":{},"code":504`) {
			t.Errorf("got %d %s", code, body)
		}
		code, body, _ = do(t, root, "GET", ts.secureURL+objectURL("slow")+"?timeout=x", nil, bearer("root-token"))
		if code != 400 || !strings.Contains(body, "invalid timeout specified in the request URL") {
			t.Errorf("bad ?timeout=: %d %s", code, body)
		}
	})
	t.Run("413", func(t *testing.T) {
		code, body, _ := do(t, root, "PUT", ts.secureURL+objectURL("body"), strings.NewReader(strings.Repeat("x", 2048)), bearer("root-token"))
		if code != 413 || !strings.Contains(body, `"message":"Request entity too large: limit is 1024","reason":"RequestEntityTooLarge"`) {
			t.Errorf("got %d %s", code, body)
		}
	})
}

func TestTooManyRequests(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	ts := startTestServer(t, func(c *Config) { c.MaxRequestsInFlight = 1 }, fakeResources{
		"block": func(http.ResponseWriter, *http.Request) {
			entered <- struct{}{}
			<-release
		},
	}, nil)
	c := ts.client(nil)
	alice := map[string]string{"Authorization": "Bearer alice-token"}
	blocked := make(chan int, 1)
	go func() {
		code, _, _ := do(t, c, "GET", ts.secureURL+objectURL("block"), nil, alice)
		blocked <- code
	}()
	<-entered
	code, body, resp := do(t, c, "GET", ts.secureURL+"/version", nil, alice)
	if code != 429 || resp.Header.Get("Retry-After") != "1" ||
		!strings.Contains(body, `"message":"Too many requests, please try again later.","reason":"TooManyRequests"`) {
		t.Errorf("got %d %s (Retry-After %q)", code, body, resp.Header.Get("Retry-After"))
	}
	if code, _, _ := do(t, c, "GET", ts.secureURL+"/version", nil, map[string]string{"Authorization": "Bearer root-token"}); code != 200 {
		t.Errorf("system:masters must be exempt from the limit, got %d", code)
	}
	close(release)
	if code := <-blocked; code != 200 {
		t.Errorf("the request holding the slot got %d", code)
	}
}

// panicText is the message of the 500 a panic produces.
const panicText = "This request caused apiserver to panic. Look in the logs for details."

func TestHooks(t *testing.T) {
	unblock := make(chan struct{})
	var order []string
	record := func(name string) HookFunc {
		return func(context.Context) error { order = append(order, name); return nil }
	}
	cfg := Config{InsecureServing: &InsecureServingInfo{Listener: listen(t)}, Notify: func(string) error { return nil }}
	s, err := cfg.Complete().New()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AddPostStartHook("wait", func(ctx context.Context) error { <-unblock; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := s.AddPostStartHook("wait", record("dup")); err == nil || !strings.Contains(err.Error(), "already registered") {
		t.Errorf("duplicate hook: %v", err)
	}
	_ = s.AddPreShutdownHook("pre", record("pre"))
	_ = s.AddPostShutdownHook("post", record("post"))
	p := s.PrepareRun()
	if err := s.AddPostStartHook("late", record("late")); err == nil {
		t.Errorf("a hook added after PrepareRun must be refused")
	}
	if err := s.AddHealthChecks(healthz.Ping); err == nil {
		t.Errorf("a check added after PrepareRun must be refused")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	url := "http://" + cfg.InsecureServing.Listener.Addr().String()
	waitFor(t, func() bool {
		code, body := get(url + "/readyz")
		return code == 500 && strings.Contains(body, "[-]poststarthook/wait failed: reason withheld")
	})
	if code, _ := get(url + "/livez"); code != 500 {
		t.Errorf("/livez with an unfinished hook and no grace period = %d, want 500", code)
	}
	close(unblock)
	<-p.Ready()
	if code, _ := get(url + "/readyz"); code != 200 {
		t.Errorf("/readyz after the hook finished = %d", code)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if strings.Join(order, ",") != "pre,post" {
		t.Errorf("shutdown hooks ran as %v", order)
	}
}

func get(url string) (int, string) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// waitFor polls cond until it holds or 10 seconds pass.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestPortInUse(t *testing.T) {
	taken := listen(t)
	defer taken.Close()
	cfg := Config{InsecureServing: &InsecureServingInfo{Address: taken.Addr().String()}}
	s, err := cfg.Complete().New()
	if err != nil {
		t.Fatal(err)
	}
	err = s.PrepareRun().Run(context.Background())
	want := fmt.Sprintf("--insecure-port %d on 127.0.0.1 is in use by another process: choose another with --insecure-port, or 0 to turn it off", taken.Addr().(*net.TCPAddr).Port)
	if err == nil || err.Error() != want {
		t.Errorf("got %v", err)
	}
}

func TestCheckPort(t *testing.T) {
	taken := listen(t)
	defer taken.Close()
	port := taken.Addr().(*net.TCPAddr).Port
	tests := []struct {
		name, address, flag, alt, want string
	}{
		{"busy", taken.Addr().String(), "--etcd-client-port", "or 0 to let the OS pick one",
			fmt.Sprintf("--etcd-client-port %d on 127.0.0.1 is in use by another process: choose another with --etcd-client-port, or 0 to let the OS pick one", port)},
		{"busy, nothing else", taken.Addr().String(), "--etcd-peer-port", "",
			fmt.Sprintf("--etcd-peer-port %d on 127.0.0.1 is in use by another process: choose another with --etcd-peer-port", port)},
		{"free", "127.0.0.1:0", "--etcd-peer-port", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckPort(tt.address, tt.flag, tt.alt)
			if got := fmt.Sprint(err); tt.want == "" && err != nil || tt.want != "" && got != tt.want {
				t.Errorf("got %v, want %q", err, tt.want)
			}
		})
	}
}
