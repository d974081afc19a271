package auth

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/apictl/apictl/pkg/serve/request"
)

// kubeadmHeaders is the configuration kubeadm gives kube-apiserver, plus a UID header.
func kubeadmHeaders(roots *x509.CertPool, allowed ...string) RequestHeaderConfig {
	return RequestHeaderConfig{
		Roots:               func() *x509.CertPool { return roots },
		AllowedNames:        allowed,
		UsernameHeaders:     []string{"X-Remote-User"},
		UIDHeaders:          []string{"X-Remote-Uid"},
		GroupHeaders:        []string{"X-Remote-Group"},
		ExtraHeaderPrefixes: []string{"X-Remote-Extra-"},
	}
}

func TestRequestHeader(t *testing.T) {
	proxyCA, clientCA := newTestCA(t), newTestCA(t)
	proxy := proxyCA.client(t, "front-proxy-client")
	otherProxy := proxyCA.client(t, "other-proxy")
	admin := clientCA.client(t, "admin", "system:masters")
	aliceHeaders := http.Header{"X-Remote-User": {"alice"}, "X-Remote-Group": {"dev", "ops"}}

	tests := []struct {
		name    string
		cfg     RequestHeaderConfig
		cert    *x509.Certificate
		headers http.Header
		want    *request.User
		wantErr string
		// kept are headers the request must still carry afterwards.
		kept []string
	}{
		{name: "allowed proxy", cfg: kubeadmHeaders(proxyCA.pool, "front-proxy-client"), cert: proxy, headers: aliceHeaders,
			want: &request.User{Name: "alice", Groups: []string{"dev", "ops"}}},
		{name: "any name when none are listed", cfg: kubeadmHeaders(proxyCA.pool), cert: otherProxy, headers: aliceHeaders,
			want: &request.User{Name: "alice", Groups: []string{"dev", "ops"}}},
		{name: "name not allowed", cfg: kubeadmHeaders(proxyCA.pool, "front-proxy-client"), cert: otherProxy, headers: aliceHeaders,
			wantErr: "x509: subject with cn=other-proxy is not in the allowed list", kept: []string{"X-Remote-User"}},
		{name: "ordinary client certificate cannot assert a user", cfg: kubeadmHeaders(proxyCA.pool), cert: admin, headers: aliceHeaders,
			wantErr: "certificate signed by unknown authority", kept: []string{"X-Remote-User", "X-Remote-Group"}},
		{name: "no client certificate", cfg: kubeadmHeaders(proxyCA.pool), headers: aliceHeaders, kept: []string{"X-Remote-User"}},
		{name: "proxy without a user header", cfg: kubeadmHeaders(proxyCA.pool), cert: proxy,
			headers: http.Header{"X-Remote-Group": {"dev"}}, kept: []string{"X-Remote-Group"}},
		{name: "empty user header", cfg: kubeadmHeaders(proxyCA.pool), cert: proxy, headers: http.Header{"X-Remote-User": {""}}},
		{name: "first non-empty username header wins",
			cfg: func() RequestHeaderConfig {
				c := kubeadmHeaders(proxyCA.pool)
				c.UsernameHeaders = []string{" X-First ", "X-Second", "X-Third"}
				return c
			}(),
			cert: proxy, headers: http.Header{"X-First": {""}, "X-Second": {"bob"}, "X-Third": {"carol"}},
			want: &request.User{Name: "bob", Groups: []string{}}},
		{name: "uid, groups in header order, extras lower-cased and percent-decoded", cfg: kubeadmHeaders(proxyCA.pool), cert: proxy,
			headers: http.Header{
				"X-Remote-User": {"alice"}, "X-Remote-Uid": {"u-1"}, "X-Remote-Group": {"dev", "", "ops"},
				"X-Remote-Extra-Foo%2fbar": {"x", "y"}, "X-Remote-Extra-Scopes": {"a"}, "x-remote-extra-Bad%zz": {"kept as sent"},
				"X-Other": {"untouched"},
			},
			want: &request.User{Name: "alice", UID: "u-1", Groups: []string{"dev", "ops"},
				Extra: map[string][]string{"foo/bar": {"x", "y"}, "scopes": {"a"}, "bad%zz": {"kept as sent"}}},
			kept: []string{"X-Other"}},
		{name: "group headers are read in the configured order",
			cfg: func() RequestHeaderConfig {
				c := kubeadmHeaders(proxyCA.pool)
				c.GroupHeaders = []string{"X-Group-B", "X-Group-A"}
				return c
			}(),
			cert: proxy, headers: http.Header{"X-Remote-User": {"alice"}, "X-Group-A": {"a"}, "X-Group-B": {"b"}},
			want: &request.User{Name: "alice", Groups: []string{"b", "a"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := NewRequestHeader(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			r := httptest.NewRequest("GET", "/", nil)
			r.Header = tt.headers.Clone()
			if tt.cert != nil {
				r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{tt.cert}}
			}
			u, ok, err := a.AuthenticateRequest(r)
			switch {
			case tt.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || ok {
					t.Fatalf("ok %v, error %v; want %q", ok, err, tt.wantErr)
				}
			case err != nil:
				t.Fatalf("error %v", err)
			case tt.want == nil && ok:
				t.Fatalf("authenticated %+v, want no answer", u)
			case tt.want != nil && (!ok || !reflect.DeepEqual(u, tt.want)):
				t.Fatalf("user %+v (ok %v), want %+v", u, ok, tt.want)
			}
			if ok {
				// The headers that named the user are gone, whatever their case.
				for k := range r.Header {
					if l := strings.ToLower(k); strings.HasPrefix(l, "x-remote-") {
						t.Errorf("header %s was not removed", k)
					}
				}
			}
			for _, k := range tt.kept {
				if r.Header.Get(k) == "" {
					t.Errorf("header %s was removed", k)
				}
			}
		})
	}
}

func TestRequestHeaderRejectsEmptyHeaderNames(t *testing.T) {
	cfg := kubeadmHeaders(x509.NewCertPool())
	cfg.GroupHeaders = []string{"X-Remote-Group", " "}
	if _, err := NewRequestHeader(cfg); err == nil || err.Error() != `empty header " "` {
		t.Fatalf("error %v, want kube's empty header error", err)
	}
}

// TestRequestHeaderFollowsTheBundle checks that a reloaded bundle takes effect at once, for the
// refusals it remembers as well as for the chains it accepted.
func TestRequestHeaderFollowsTheBundle(t *testing.T) {
	proxyCA, otherCA := newTestCA(t), newTestCA(t)
	proxy := proxyCA.client(t, "front-proxy-client")
	roots := otherCA.pool
	a, err := NewRequestHeader(RequestHeaderConfig{Roots: func() *x509.CertPool { return roots }, UsernameHeaders: []string{"X-Remote-User"}})
	if err != nil {
		t.Fatal(err)
	}
	try := func() (bool, error) {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("X-Remote-User", "alice")
		r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{proxy}}
		_, ok, err := a.AuthenticateRequest(r)
		return ok, err
	}
	for i := range 2 {
		if ok, err := try(); ok || err == nil {
			t.Fatalf("attempt %d against another CA: ok %v, error %v", i, ok, err)
		}
	}
	roots = proxyCA.pool
	if ok, err := try(); !ok || err != nil {
		t.Fatalf("after the bundle changed: ok %v, error %v", ok, err)
	}
	roots = otherCA.pool
	if ok, err := try(); ok || err == nil {
		t.Fatalf("after the CA was removed again: ok %v, error %v", ok, err)
	}
}

func TestUnionPutsTheProxyFirst(t *testing.T) {
	proxyCA, clientCA := newTestCA(t), newTestCA(t)
	proxyAuth, err := NewRequestHeader(kubeadmHeaders(proxyCA.pool, "front-proxy-client"))
	if err != nil {
		t.Fatal(err)
	}
	clientAuth := &ClientCert{Roots: func() *x509.CertPool { return clientCA.pool }}
	union := Union(Anonymous, proxyAuth, clientAuth)
	tests := []struct {
		name string
		cert *x509.Certificate
		want string
	}{
		{"proxy asserts alice", proxyCA.client(t, "front-proxy-client"), "alice"},
		{"admin's headers are ignored", clientCA.client(t, "admin", "system:masters"), "admin"},
		{"a disallowed proxy is refused", proxyCA.client(t, "other-proxy"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.Header.Set("X-Remote-User", "alice")
			r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{tt.cert}}
			u, ok, err := union.AuthenticateRequest(r)
			if tt.want == "" {
				if ok || err == nil {
					t.Fatalf("user %+v, error %v; want a 401", u, err)
				}
				return
			}
			if err != nil || !ok || u.Name != tt.want || !u.InGroup(request.GroupAuthenticated) {
				t.Fatalf("user %+v (ok %v, error %v), want %s in system:authenticated", u, ok, err, tt.want)
			}
		})
	}
}

func BenchmarkRequestHeaderRefusesAClientCertificate(b *testing.B) {
	proxyCA, clientCA := newTestCA(b), newTestCA(b)
	a, err := NewRequestHeader(kubeadmHeaders(proxyCA.pool, "front-proxy-client"))
	if err != nil {
		b.Fatal(err)
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{clientCA.client(b, "admin", "system:masters")}}
	b.ReportAllocs()
	for b.Loop() {
		if _, ok, err := a.AuthenticateRequest(r); ok || err == nil {
			b.Fatal("an ordinary client certificate was accepted as a proxy's")
		}
	}
}
