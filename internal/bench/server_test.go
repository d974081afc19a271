package bench

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apictl/apictl/pkg/certs"
)

// testPKI writes into <data-dir>/pki what `apictl serve` writes there on its first start (the same
// code makes it) and returns the serving certificate and the CA pool for a test server.
func testPKI(t *testing.T, dataDir string) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	pki := filepath.Join(dataDir, "pki")
	if _, err := certs.EnsureServing(context.Background(), certs.NewServingSpec(pki)); err != nil {
		t.Fatal(err)
	}
	serving, err := tls.LoadX509KeyPair(filepath.Join(pki, "apiserver.crt"), filepath.Join(pki, "apiserver.key"))
	if err != nil {
		t.Fatal(err)
	}
	caPEM, err := os.ReadFile(filepath.Join(pki, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatal("no CA certificate in ca.crt")
	}
	return serving, pool
}

func TestNewClientHTTP2(t *testing.T) {
	dataDir := t.TempDir()
	serving, pool := testPKI(t, dataDir)
	admin, err := tls.LoadX509KeyPair(filepath.Join(dataDir, "pki", "admin.crt"), filepath.Join(dataDir, "pki", "admin.key"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		nextProtos []string
		wantErr    bool
	}{
		{name: "negotiates HTTP/2 with the admin certificate", nextProtos: []string{"h2", "http/1.1"}},
		// The h2+tls client must fail rather than fall back to HTTP/1.1.
		{name: "refuses a server without HTTP/2", nextProtos: []string{"http/1.1"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clientCNs := make(chan string, 1)
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				clientCNs <- r.TLS.PeerCertificates[0].Subject.CommonName
			}))
			srv.TLS = &tls.Config{Certificates: []tls.Certificate{serving}, ClientCAs: pool,
				ClientAuth: tls.RequireAndVerifyClientCert, NextProtos: tt.nextProtos}
			srv.Config.ErrorLog = log.New(io.Discard, "", 0)
			srv.StartTLS()
			defer srv.Close()

			client, base, err := (&server{dataDir: dataDir, secureURL: srv.URL}).newClient(ViaHTTP2, 8)
			if err != nil {
				t.Fatal(err)
			}
			defer client.CloseIdleConnections()
			err = httpTarget{client: client, base: base, protoMajor: 2}.do(context.Background(), http.MethodGet, "/", nil, http.StatusOK, nil)
			if tt.wantErr {
				if err == nil {
					t.Error("no error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cn := <-clientCNs; cn != admin.Leaf.Subject.CommonName {
				t.Errorf("client certificate %q, want the admin's %q", cn, admin.Leaf.Subject.CommonName)
			}
		})
	}
}

func TestNewClientHTTP1(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	s := &server{insecureURL: srv.URL}
	client, base, err := s.newClient(ViaHTTP1, 32)
	if err != nil {
		t.Fatal(err)
	}
	defer client.CloseIdleConnections()
	tr := client.Transport.(*http.Transport)
	if base != srv.URL || tr.MaxIdleConnsPerHost < 32 || !tr.DisableCompression || tr.Protocols.HTTP2() || !tr.Protocols.HTTP1() {
		t.Errorf("base %s, transport %+v", base, tr)
	}
	if err := (httpTarget{client: client, base: base, protoMajor: 1}).do(context.Background(), http.MethodGet, "/", nil, http.StatusOK, nil); err != nil {
		t.Fatal(err)
	}
}

func TestNewClientWithoutPKI(t *testing.T) {
	s := &server{dataDir: t.TempDir()}
	if _, _, err := s.newClient(ViaHTTP2, 8); err == nil {
		t.Error("no error without a CA")
	}
	if _, _, err := s.newClient(ViaEtcd, 8); err == nil {
		t.Error("an HTTP client for etcd")
	}
}

func TestServerArgs(t *testing.T) {
	got := serverArgs("/d", 1, 2, []string{"http://a:1", "http://b:2"})
	want := []string{"serve", "--data-dir", "/d", "--bind-address", "127.0.0.1", "--insecure-port", "1", "--secure-port", "2",
		"--etcd-prefix", "/registry", "--etcd-servers", "http://a:1,http://b:2"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if got := serverArgs("/d", 1, 2, nil); slices.Contains(got, "--etcd-servers") {
		t.Errorf("embedded etcd wanted, got %q", got)
	}
	// Extra flags come last, so that they win over the harness's own.
	got = serverArgs("/d", 1, 2, nil, "--max-requests-inflight", "10")
	if !slices.Equal(got[len(got)-2:], []string{"--max-requests-inflight", "10"}) {
		t.Errorf("extra flags not last: %q", got)
	}
}
