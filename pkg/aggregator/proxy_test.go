package aggregator

import (
	"bufio"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/apictl/apictl/pkg/serve/request"
)

// fixedResolver resolves every service to one address, or fails.
type fixedResolver struct {
	host string
	err  error
}

func (f fixedResolver) ResolveEndpoint(namespace, name string, port int32) (*url.URL, error) {
	if f.err != nil {
		return nil, f.err
	}
	return &url.URL{Scheme: "https", Host: f.host}, nil
}

// proxyFixture is an extension server on TLS that requires the front-proxy client certificate, and
// in front of it a plain HTTP server that puts alice in each request's context (as authentication
// would) and hands it to the proxy.
type proxyFixture struct {
	backend, front    *httptest.Server
	proxy             *proxyHandler
	caBundle          []byte
	certFile, keyFile string
}

var alice = request.User{Name: "alice", UID: "42", Groups: []string{"dev", "system:authenticated"},
	Extra: map[string][]string{"scopes": {"a", "b"}}}

func newProxyFixture(t *testing.T, backend http.Handler) *proxyFixture {
	t.Helper()
	servingCA, proxyCA := newTestCA(t, "serving-ca"), newTestCA(t, "front-proxy-ca")
	sCert, sKey := servingCA.issue(t, "api", false, "api.ns.svc")
	f := &proxyFixture{backend: httptest.NewUnstartedServer(backend)}
	f.backend.TLS = &tls.Config{Certificates: []tls.Certificate{tlsPair(t, sCert, sKey)},
		ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: proxyCA.pool()}
	f.backend.StartTLS()
	t.Cleanup(f.backend.Close)
	cCert, cKey := proxyCA.issue(t, "front-proxy-client", true)
	f.caBundle = servingCA.pem
	f.certFile, f.keyFile = writePair(t, t.TempDir(), "front-proxy-client", cCert, cKey)
	rt, err := newRoundTripper(newCertHolder(f.certFile, f.keyFile), servingCA.pem, false, "ns", "api")
	if err != nil {
		t.Fatal(err)
	}
	f.proxy = &proxyHandler{resolver: fixedResolver{host: f.backend.Listener.Addr().String()}, log: slog.New(slog.DiscardHandler)}
	f.proxy.target.Store(&proxyTarget{name: "v1beta1.wardle.example.com", namespace: "ns", service: "api", port: 443, available: true, roundTripper: rt})
	f.front = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u := alice
		f.proxy.ServeHTTP(w, r.WithContext(request.WithUser(r.Context(), &u)))
	}))
	t.Cleanup(f.front.Close)
	return f
}

// seen is what the extension server saw of a request.
type seen struct {
	Path, Query, ClientCN, Authorization string
	Header                               map[string][]string
}

func echo(w http.ResponseWriter, r *http.Request) {
	s := seen{Path: r.URL.Path, Query: r.URL.RawQuery, Authorization: r.Header.Get("Authorization"), Header: map[string][]string{}}
	if len(r.TLS.PeerCertificates) > 0 {
		s.ClientCN = r.TLS.PeerCertificates[0].Subject.CommonName
	}
	for k, v := range r.Header {
		if strings.HasPrefix(k, "X-Remote-") {
			s.Header[k] = v
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(s)
}

// TestProxyPassesTheUser: the extension server gets the request's path and query over TLS verified
// with the caBundle, the front-proxy client certificate, and the user in X-Remote-* headers, where
// headers a client sent itself are replaced.
func TestProxyPassesTheUser(t *testing.T) {
	f := newProxyFixture(t, http.HandlerFunc(echo))
	req, _ := http.NewRequest("GET", f.front.URL+"/apis/wardle.example.com/v1beta1/namespaces/ns/flunders?limit=1&labelSelector=a%3Db", nil)
	req.Header.Set("X-Remote-User", "mallory")
	req.Header.Set("X-Remote-Extra-Evil", "yes")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s seen
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil || resp.StatusCode != 200 {
		t.Fatalf("%d %v", resp.StatusCode, err)
	}
	want := map[string][]string{"X-Remote-User": {"alice"}, "X-Remote-Uid": {"42"}, "X-Remote-Group": {"dev", "system:authenticated"},
		"X-Remote-Extra-Scopes": {"a", "b"}}
	if fmt.Sprint(s.Header) != fmt.Sprint(want) {
		t.Errorf("X-Remote-* headers %v, want %v", s.Header, want)
	}
	if s.ClientCN != "front-proxy-client" || s.Path != "/apis/wardle.example.com/v1beta1/namespaces/ns/flunders" || s.Query != "labelSelector=a%3Db&limit=1" {
		t.Errorf("the extension server saw %+v", s)
	}
}

// TestProxyRefusesAnUntrustedServer: a caBundle that did not sign the server's certificate is a
// failed request, answered 503 as kube's proxy answers transport errors.
func TestProxyRefusesAnUntrustedServer(t *testing.T) {
	f := newProxyFixture(t, http.HandlerFunc(echo))
	rt, err := newRoundTripper(nil, newTestCA(t, "other").pem, false, "ns", "api")
	if err != nil {
		t.Fatal(err)
	}
	target := *f.proxy.target.Load()
	target.roundTripper = rt
	f.proxy.target.Store(&target)
	resp, err := http.Get(f.front.URL + "/apis/wardle.example.com/v1beta1")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "certificate") {
		t.Errorf("%d %q, want 503 naming the certificate", resp.StatusCode, body)
	}
}

// TestProxyUnavailable pins kube's answers (checked against kube-apiserver v1.37.2 for an APIService
// whose service is missing): 503 "service unavailable" in plain text, not a Status.
func TestProxyUnavailable(t *testing.T) {
	f := newProxyFixture(t, http.HandlerFunc(echo))
	available := *f.proxy.target.Load()
	unavailable := available
	unavailable.available = false
	tests := []struct {
		name     string
		target   *proxyTarget
		resolver fixedResolver
		code     int
		body     string
	}{
		{"not available", &unavailable, fixedResolver{host: f.backend.Listener.Addr().String()}, 503, "service unavailable\n"},
		{"not resolved", &available, fixedResolver{err: errors.New(`no endpoints available for service "api"`)}, 503, "service unavailable\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.proxy.target.Store(tt.target)
			f.proxy.resolver = tt.resolver
			resp, err := http.Get(f.front.URL + "/apis/wardle.example.com/v1beta1/flunders")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.code || string(body) != tt.body || resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" ||
				resp.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("%d %q %v, want %d %q in plain text", resp.StatusCode, body, resp.Header, tt.code, tt.body)
			}
		})
	}
	t.Run("no user", func(t *testing.T) {
		f.proxy.target.Store(&available)
		rec := httptest.NewRecorder()
		f.proxy.ServeHTTP(rec, httptest.NewRequest("GET", "/apis/wardle.example.com/v1beta1", nil))
		if rec.Code != 500 || rec.Body.String() != "missing user\n" {
			t.Errorf("%d %q", rec.Code, rec.Body)
		}
	})
}

// TestProxyStreamsWatches: a watch's events reach the client as the extension server sends them.
func TestProxyStreamsWatches(t *testing.T) {
	next := make(chan struct{})
	f := newProxyFixture(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintln(w, `{"type":"ADDED"}`)
		w.(http.Flusher).Flush()
		select {
		case <-next:
		case <-r.Context().Done():
			return
		}
		fmt.Fprintln(w, `{"type":"MODIFIED"}`)
	}))
	resp, err := http.Get(f.front.URL + "/apis/wardle.example.com/v1beta1/flunders?watch=true")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	lines := bufio.NewReader(resp.Body)
	read := func() string {
		t.Helper()
		done := make(chan string, 1)
		go func() {
			l, _ := lines.ReadString('\n')
			done <- l
		}()
		select {
		case l := <-done:
			return l
		case <-time.After(10 * time.Second):
			t.Fatal("no event within 10s")
			return ""
		}
	}
	if l := read(); l != "{\"type\":\"ADDED\"}\n" {
		t.Fatalf("first event %q", l)
	}
	close(next) // the second event is sent only now: the first came through alone
	if l := read(); l != "{\"type\":\"MODIFIED\"}\n" {
		t.Fatalf("second event %q", l)
	}
}

// TestProxyUpgrades: an upgrade (as kubectl exec's SPDY or websocket) goes through, with the user in
// the headers of the upgrade request, and bytes flow both ways afterwards.
func TestProxyUpgrades(t *testing.T) {
	user := make(chan string, 1)
	f := newProxyFixture(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "test-stream" {
			http.Error(w, "not an upgrade", http.StatusBadRequest)
			return
		}
		user <- r.Header.Get("X-Remote-User") + " " + r.TLS.PeerCertificates[0].Subject.CommonName
		conn, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		_, _ = rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: test-stream\r\n\r\n")
		_ = rw.Flush()
		line, _ := rw.ReadString('\n')
		_, _ = rw.WriteString("echo " + line)
		_ = rw.Flush()
	}))
	conn, err := net.Dial("tcp", f.front.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(conn, "POST /apis/wardle.example.com/v1beta1/namespaces/ns/flunders/x/exec HTTP/1.1\r\nHost: front\r\nConnection: Upgrade\r\nUpgrade: test-stream\r\n\r\n")
	rd := bufio.NewReader(conn)
	resp, err := http.ReadResponse(rd, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("%d %s, want 101", resp.StatusCode, body)
	}
	if u := <-user; u != "alice front-proxy-client" {
		t.Errorf("the upgrade request came as %q", u)
	}
	fmt.Fprintf(conn, "ping\n")
	if l, err := rd.ReadString('\n'); err != nil || l != "echo ping\n" {
		t.Errorf("after the upgrade: %q %v", l, err)
	}
}
