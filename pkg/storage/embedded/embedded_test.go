package embedded

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"log/slog"
	"math/big"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
)

func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func start(t testing.TB, cfg Config) *Server {
	t.Helper()
	if cfg.Dir == "" {
		cfg.Dir = filepath.Join(t.TempDir(), "etcd")
	}
	cfg.UnsafeNoFsync = true
	s, err := Start(testContext(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	return s
}

func client(t testing.TB, s *Server) *clientv3.Client {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: s.ClientURLs()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestListensOnLoopbackWithAnOSPort(t *testing.T) {
	a := start(t, Config{})
	b := start(t, Config{})
	for _, s := range []*Server{a, b} {
		urls := s.ClientURLs()
		if len(urls) != 1 {
			t.Fatalf("client URLs %q", urls)
		}
		u, err := url.Parse(urls[0])
		if err != nil || u.Scheme != "http" || u.Hostname() != "127.0.0.1" || u.Port() == "0" || u.Port() == "" {
			t.Errorf("client URL %q: want http://127.0.0.1:<port chosen by the OS>", urls[0])
		}
	}
	if a.ClientURLs()[0] == b.ClientURLs()[0] {
		t.Error("two embedded etcds share a port")
	}
}

func TestRestartKeepsData(t *testing.T) {
	ctx := testContext(t)
	dir := filepath.Join(t.TempDir(), "etcd")
	first, err := Start(ctx, Config{Dir: dir, UnsafeNoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client(t, first).Put(ctx, "/registry/configmaps/default/a", "kept"); err != nil {
		t.Fatal(err)
	}
	if err := first.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := first.Close(ctx); err != nil {
		t.Fatalf("a second Close: %v", err)
	}
	second := start(t, Config{Dir: dir})
	resp, err := client(t, second).Get(ctx, "/registry/configmaps/default/a")
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "kept" {
		t.Errorf("after the restart: %v", resp.Kvs)
	}
	if info, err := os.Stat(dir); err != nil || info.Mode().Perm() != 0o700 {
		t.Errorf("data dir mode %v, %v; want 0700", info.Mode(), err)
	}
}

// TestRestartAfterManyWrites writes far more than the raft entries etcd keeps after compacting its
// log, then restarts: every write is still there, and a watch from the first write's revision
// still sees them all (the history is etcd's store, not its raft log).
func TestRestartAfterManyWrites(t *testing.T) {
	ctx := testContext(t)
	dir := filepath.Join(t.TempDir(), "etcd")
	const writes = 10 * snapshotCatchUpEntries
	first := start(t, Config{Dir: dir})
	c := client(t, first)
	var firstRevision int64
	for i := range writes {
		resp, err := c.Put(ctx, fmt.Sprintf("/registry/configmaps/default/cm-%04d", i), strings.Repeat("x", 200))
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			firstRevision = resp.Header.Revision
		}
	}
	if err := first.Close(ctx); err != nil {
		t.Fatal(err)
	}
	second := client(t, start(t, Config{Dir: dir}))
	resp, err := second.Get(ctx, "/registry/configmaps/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Count != writes {
		t.Errorf("after the restart: %d keys, want %d", resp.Count, writes)
	}
	watchCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	seen := 0
	for w := range second.Watch(watchCtx, "/registry/configmaps/", clientv3.WithPrefix(), clientv3.WithRev(firstRevision)) {
		if err := w.Err(); err != nil {
			t.Fatal(err)
		}
		if seen += len(w.Events); seen >= writes {
			break
		}
	}
	if seen != writes {
		t.Errorf("a watch from revision %d saw %d events, want %d", firstRevision, seen, writes)
	}
}

func TestStartFailures(t *testing.T) {
	running := start(t, Config{})
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	dirOf := func(s *Server) string { return s.etcd.Config().Dir }
	tests := []struct {
		name string
		ctx  context.Context
		cfg  Config
		want string
	}{
		{"no dir", context.Background(), Config{}, "no data directory"},
		{"dir is a file", context.Background(), Config{Dir: filepath.Join(file, "etcd")}, "not a directory"},
		{"dir in use", context.Background(), Config{Dir: dirOf(running)}, "in use by another apictl process"},
		{"canceled", canceled, Config{Dir: t.TempDir()}, "context canceled"},
		{"bad address", context.Background(), Config{Dir: t.TempDir(), ClientAddress: "nohost"}, "nohost"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Start(tt.ctx, tt.cfg)
			if err == nil {
				s.Close(context.Background())
				t.Fatal("Start succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
	// A failed start released its lock: the directory can be used.
	dir := t.TempDir()
	if _, err := Start(testContext(t), Config{Dir: dir, ClientAddress: "nohost"}); err == nil {
		t.Fatal("Start with a bad address succeeded")
	}
	start(t, Config{Dir: dir})
}

// recorder keeps the records a logger receives.
type recorder struct {
	mu      sync.Mutex
	records []slog.Record
}

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *recorder) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *recorder) WithGroup(string) slog.Handler            { return r }
func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.records = append(r.records, rec)
	return nil
}

// A normal life (start, use, stop) logs nothing at warning level or above: what etcd reports as
// warnings or errors in this setup (the single port, no auth token, listeners closing at shutdown) is
// expected, and goes to debug. Warnings about slowness are real, and a loaded test machine may see
// them: they do not count.
func TestQuietAtWarnLevel(t *testing.T) {
	ctx := testContext(t)
	rec := &recorder{}
	s, err := Start(ctx, Config{Dir: filepath.Join(t.TempDir(), "etcd"), Logger: slog.New(rec), LogLevel: slog.LevelDebug, UnsafeNoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client(t, s).Put(ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	demoted := false
	for _, r := range rec.records {
		slowness := strings.Contains(r.Message, "took too long") || strings.Contains(r.Message, "slow")
		if r.Level >= slog.LevelWarn && !slowness {
			t.Errorf("%s %q", r.Level, r.Message)
		}
		if strings.HasPrefix(r.Message, "Running http and grpc server on single port") {
			demoted = r.Level == slog.LevelDebug
		}
	}
	if !demoted {
		t.Error("etcd's single-port notice did not reach the logger at debug level")
	}
}

// BenchmarkEmbeddedStart measures a start on an empty directory until etcd serves requests, and the
// stop: apictl serve must be ready within 0.2s of starting.
func BenchmarkEmbeddedStart(b *testing.B) {
	b.ReportAllocs()
	ctx := context.Background()
	for b.Loop() {
		dir := filepath.Join(b.TempDir(), "etcd")
		s, err := Start(ctx, Config{Dir: dir})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := s.Close(ctx); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

func TestPrivateTakesOnlyItsClientCertificate(t *testing.T) {
	s := start(t, Config{Private: true})
	creds, ok := s.ClientCredentials()
	if !ok {
		t.Fatal("a private etcd has no client credentials")
	}
	url := s.ClientURLs()[0]
	if !strings.HasPrefix(url, "https://127.0.0.1:") {
		t.Fatalf("client URL %q: want https://127.0.0.1:<port>", url)
	}
	caPEM, err := os.ReadFile(creds.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	own, err := tls.LoadX509KeyPair(creds.CertFile, creds.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	stranger := selfSignedClient(t, clientCommonName)
	tests := []struct {
		name      string
		endpoint  string
		tls       *tls.Config
		wantError bool
	}{
		{name: "plain", endpoint: strings.Replace(url, "https://", "http://", 1), wantError: true},
		{name: "TLS without a client certificate", endpoint: url, tls: &tls.Config{RootCAs: roots}, wantError: true},
		{name: "TLS with a certificate of the same name from another CA", endpoint: url,
			tls: &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{stranger}}, wantError: true},
		{name: "TLS with apictl's client certificate", endpoint: url, tls: &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{own}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := clientv3.New(clientv3.Config{Endpoints: []string{tt.endpoint}, TLS: tt.tls, DialTimeout: 2 * time.Second})
			if err != nil {
				if !tt.wantError {
					t.Fatal(err)
				}
				return
			}
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			_, err = c.Put(ctx, "/registry/configmaps/kube-system/planted", "{}")
			if tt.wantError && err == nil {
				t.Fatal("the write succeeded")
			}
			if !tt.wantError && err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestPrivateFilesAreTheOwnersOnly(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "etcd")
	s := start(t, Config{Dir: dir, Private: true})
	creds, _ := s.ClientCredentials()
	for path, want := range map[string]os.FileMode{
		dir: 0o700, filepath.Join(dir, pkiDir): 0o700, creds.KeyFile: 0o600, filepath.Join(dir, pkiDir, serverKeyFile): 0o600,
	} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s: mode %o, want %o", path, got, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, pkiDir, "ca.key")); !os.IsNotExist(err) {
		t.Errorf("the CA's key was kept: %v", err)
	}
}

func TestPrivateCredentialsLastAndRenew(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	read := func() string {
		b, err := os.ReadFile(filepath.Join(dir, pkiDir, clientCertFile))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if _, _, err := ensureCredentials(dir, now); err != nil {
		t.Fatal(err)
	}
	first := read()
	if _, _, err := ensureCredentials(dir, now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if read() != first {
		t.Error("a second start replaced valid credentials")
	}
	if _, _, err := ensureCredentials(dir, now.Add(credentialsValidity-credentialsRenewBefore/2)); err != nil {
		t.Fatal(err)
	}
	if read() == first {
		t.Error("credentials close to expiry were not renewed")
	}
	renewed := read()
	if err := os.Remove(filepath.Join(dir, pkiDir, serverKeyFile)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ensureCredentials(dir, now); err != nil {
		t.Fatal(err)
	}
	if read() == renewed {
		t.Error("credentials with a missing file were not replaced")
	}
}

// selfSignedClient is a client certificate with the given name that no CA of apictl's signed.
func selfSignedClient(t *testing.T, cn string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// BenchmarkClient measures a read and a write over the client connection, plain and private: the
// price of TLS with a client certificate on every request apictl makes to its embedded etcd.
func BenchmarkClient(b *testing.B) {
	for _, private := range []bool{false, true} {
		s := start(b, Config{Private: private})
		cfg := clientv3.Config{Endpoints: s.ClientURLs()}
		if creds, ok := s.ClientCredentials(); ok {
			tlsConfig, err := (transport.TLSInfo{CertFile: creds.CertFile, KeyFile: creds.KeyFile, TrustedCAFile: creds.CAFile}).ClientConfig()
			if err != nil {
				b.Fatal(err)
			}
			cfg.TLS = tlsConfig
		}
		c, err := clientv3.New(cfg)
		if err != nil {
			b.Fatal(err)
		}
		value := strings.Repeat("x", 480)
		ctx := context.Background()
		if _, err := c.Put(ctx, "/k", value); err != nil {
			b.Fatal(err)
		}
		name := map[bool]string{false: "plain", true: "private"}[private]
		b.Run(name+"/get", func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := c.Get(ctx, "/k"); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
		b.Run(name+"/put", func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := c.Put(ctx, "/k", value); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
		c.Close()
	}
}
