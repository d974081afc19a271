package etcd3

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apictl/apictl/pkg/storage"
	"github.com/apictl/apictl/pkg/storage/embedded"
	"github.com/apictl/apictl/pkg/storage/internal/storagetest"
)

// When etcd stops, the health check and requests fail with Unavailable within their bounds and a new
// store gives up with the endpoints in its error; when etcd returns on the same address, the old store
// reconnects by itself and finds everything it wrote.
func TestEtcdStopsAndReturns(t *testing.T) {
	ctx := testContext(t)
	dir := filepath.Join(t.TempDir(), "etcd")
	srv, err := embedded.Start(ctx, embedded.Config{Dir: dir, UnsafeNoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close(context.Background()) })
	endpoints := srv.ClientURLs()
	logs := storagetest.NewLogRecorder()
	s := newStore(t, endpoints, Config{HealthcheckTimeout: 300 * time.Millisecond, Logger: slog.New(logs)})
	if err := s.Healthy(ctx); err != nil {
		t.Fatalf("healthy etcd: %v", err)
	}
	if _, err := s.Create(ctx, "configmaps/ns/kept", []byte("v"), 0); err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(ctx); err != nil {
		t.Fatal(err)
	}

	err = s.Healthy(ctx)
	if !storage.IsUnavailable(err) || !strings.Contains(err.Error(), endpoints[0]) || !strings.Contains(err.Error(), "did not answer within 300ms") {
		t.Errorf("Healthy with etcd stopped: %v; want Unavailable naming %s and the timeout", err, endpoints[0])
	}

	reqCtx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err = s.Get(reqCtx, "configmaps/ns/kept", storage.GetOptions{})
	cancel()
	if !storage.IsUnavailable(err) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Get with etcd stopped: %v; want Unavailable carrying the deadline (for a 504)", err)
	}

	start := time.Now()
	_, err = New(ctx, Config{Endpoints: endpoints, HealthcheckTimeout: 200 * time.Millisecond})
	elapsed := time.Since(start)
	if !storage.IsUnavailable(err) || !strings.Contains(err.Error(), endpoints[0]) || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("New with etcd stopped: %v; want Unavailable naming the endpoint and the dial error", err)
	}
	// The bound is 3 × 200ms, plus at most a second to diagnose; anything near it is fine, a hang is not.
	if elapsed > 10*time.Second {
		t.Errorf("New gave up after %s", elapsed)
	}

	storagetest.RestartEtcd(t, dir, endpoints[0])
	eventually(t, 30*time.Second, "the store reconnects", func() (bool, error) {
		reqCtx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		got, err := s.Get(reqCtx, "configmaps/ns/kept", storage.GetOptions{})
		if storage.IsUnavailable(err) {
			return false, nil
		}
		if err == nil && string(got.Value) != "v" {
			t.Errorf("after the restart the value is %q", got.Value)
		}
		return true, err
	})
	if err := s.Healthy(ctx); err != nil {
		t.Errorf("Healthy after etcd returned: %v", err)
	}
	// The failures were returned to their callers; the log does not repeat each of them.
	if w := logs.Warned(); len(w) != 0 {
		t.Errorf("warnings logged: %q", w)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	ctx := testContext(t)
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no endpoints", Config{}, "no endpoints"},
		{"cert without key", Config{Endpoints: sharedEndpoints, CertFile: "c.pem"}, "both a certificate file and a key file"},
		{"missing CA file", Config{Endpoints: sharedEndpoints, CAFile: "/nonexistent/ca.pem"}, "/nonexistent/ca.pem"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(ctx, tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

// A port that accepts connections but never speaks gRPC: the dial succeeds, so the error is the
// deadline alone.
func TestNewTimesOutOnSilentServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	_, err = New(testContext(t), Config{Endpoints: []string{"http://" + l.Addr().String()}, HealthcheckTimeout: 100 * time.Millisecond})
	if !storage.IsUnavailable(err) || !strings.Contains(err.Error(), "did not answer within 300ms (") {
		t.Errorf("err = %v", err)
	}
}
