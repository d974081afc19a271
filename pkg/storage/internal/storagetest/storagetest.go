// Package storagetest starts embedded etcds for the tests of the storage packages, and holds the
// helpers those tests share.
package storagetest

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apictl/apictl/pkg/storage/embedded"
)

// RunWithSharedEtcd starts one embedded etcd, without fsync, for a whole test binary, calls run with
// its client URLs and stops it afterwards: what a TestMain needs. Tests share it under prefixes of
// their own. It returns run's exit code, or 1 when etcd does not start.
func RunWithSharedEtcd(name string, run func(endpoints []string) int) int {
	dir, err := os.MkdirTemp("", "apictl-"+name+"-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := embedded.Start(ctx, embedded.Config{Dir: filepath.Join(dir, "etcd"), UnsafeNoFsync: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer srv.Close(context.Background())
	return run(srv.ClientURLs())
}

// IsolatedEtcd starts an embedded etcd of the test's own, stopped when the test ends: for tests that
// compact or stop etcd, which would disturb the others.
func IsolatedEtcd(tb testing.TB) *embedded.Server {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := embedded.Start(ctx, embedded.Config{Dir: filepath.Join(tb.TempDir(), "etcd"), UnsafeNoFsync: true})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := srv.Close(context.Background()); err != nil {
			tb.Errorf("stop etcd: %v", err)
		}
	})
	return srv
}

// RestartEtcd starts etcd again on dir and on the address of endpoint (one of the client URLs it had),
// after the test stopped it, and stops it when the test ends. It skips the test when another process
// took the port meanwhile: the OS chose it, and nothing reserves it while etcd is down.
func RestartEtcd(tb testing.TB, dir, endpoint string) *embedded.Server {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	address := strings.TrimPrefix(endpoint, "http://")
	srv, err := embedded.Start(ctx, embedded.Config{Dir: dir, ClientAddress: address, UnsafeNoFsync: true})
	if err != nil {
		if strings.Contains(err.Error(), "address already in use") {
			tb.Skipf("another process took port %s meanwhile: %v", address, err)
		}
		tb.Fatal(err)
	}
	tb.Cleanup(func() { srv.Close(context.Background()) })
	return srv
}

// Context ends with the test, and in any case after d: callers keep d well below the test binary's
// own timeout, so that a hung call fails its test instead of the whole binary.
func Context(tb testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	tb.Cleanup(cancel)
	return ctx
}

var prefixCounter atomic.Int64

// Prefix returns a key prefix under root of the test's own, named after it, so that the tests of a
// binary can share one etcd.
func Prefix(tb testing.TB, root string) string {
	name := strings.NewReplacer("/", "_", " ", "_").Replace(tb.Name())
	return fmt.Sprintf("%s/%s-%d", root, name, prefixCounter.Add(1))
}

// LogRecorder is a slog.Handler that lets a test wait for a message and see the warnings.
type LogRecorder struct {
	messages chan string
	mu       sync.Mutex
	warnings []string
}

// NewLogRecorder returns a LogRecorder; use it with slog.New.
func NewLogRecorder() *LogRecorder { return &LogRecorder{messages: make(chan string, 1000)} }

// Enabled implements slog.Handler: every level is recorded.
func (r *LogRecorder) Enabled(context.Context, slog.Level) bool { return true }

// WithAttrs implements slog.Handler; attributes are not recorded.
func (r *LogRecorder) WithAttrs([]slog.Attr) slog.Handler { return r }

// WithGroup implements slog.Handler; groups are not recorded.
func (r *LogRecorder) WithGroup(string) slog.Handler { return r }

// Handle implements slog.Handler. Messages beyond the buffer of those not yet waited for are dropped.
func (r *LogRecorder) Handle(_ context.Context, rec slog.Record) error {
	if rec.Level >= slog.LevelWarn {
		r.mu.Lock()
		r.warnings = append(r.warnings, rec.Message)
		r.mu.Unlock()
	}
	select {
	case r.messages <- rec.Message:
	default:
	}
	return nil
}

// Warned returns the messages logged at warning level or above.
func (r *LogRecorder) Warned() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.warnings...)
}

// WaitFor waits, at most 10s, until message is logged, and fails the test if it is not.
func (r *LogRecorder) WaitFor(tb testing.TB, message string) {
	tb.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case m := <-r.messages:
			if m == message {
				return
			}
		case <-timeout:
			tb.Fatalf("no log message %q", message)
		}
	}
}
