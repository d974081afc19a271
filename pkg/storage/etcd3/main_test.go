package etcd3

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apictl/apictl/pkg/storage"
	"github.com/apictl/apictl/pkg/storage/internal/storagetest"
)

// sharedEndpoints is the etcd that most tests of this binary share, each under a prefix of its own.
// Tests that compact or stop etcd start their own (storagetest.IsolatedEtcd): compaction is cluster-wide.
var sharedEndpoints []string

func TestMain(m *testing.M) {
	os.Exit(storagetest.RunWithSharedEtcd("etcd3", func(endpoints []string) int {
		sharedEndpoints = endpoints
		return m.Run()
	}))
}

// uniquePrefix gives each store of a test binary its own key space on the shared etcd.
func uniquePrefix(tb testing.TB) string { return storagetest.Prefix(tb, "/test") }

// newStore connects to endpoints (the shared etcd when nil) under a new prefix unless cfg names one.
func newStore(tb testing.TB, endpoints []string, cfg Config) *Store {
	tb.Helper()
	if endpoints == nil {
		endpoints = sharedEndpoints
	}
	cfg.Endpoints = endpoints
	if cfg.Prefix == "" {
		cfg.Prefix = uniquePrefix(tb)
	}
	s, err := New(testContext(tb), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Errorf("close store: %v", err)
		}
	})
	return s
}

// rawClient is a plain etcd client, to look behind the store's back.
func rawClient(tb testing.TB, endpoints []string) *clientv3.Client {
	tb.Helper()
	if endpoints == nil {
		endpoints = sharedEndpoints
	}
	c, err := clientv3.New(clientv3.Config{Endpoints: endpoints})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

// testContext ends with the test, and in any case well before the test binary's own timeout.
func testContext(tb testing.TB) context.Context { return storagetest.Context(tb, time.Minute) }

// eventually polls cond until it holds or the deadline passes: for effects that etcd applies in
// its own time (lease expiry, compaction), without asserting how long they take.
func eventually(tb testing.TB, within time.Duration, what string, cond func() (bool, error)) {
	tb.Helper()
	deadline := time.Now().Add(within)
	for {
		ok, err := cond()
		if err != nil {
			tb.Fatal(err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%s: not within %s", what, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// checkTooLarge checks that err says etcd has not reached asked yet, and that it is at least at current.
func checkTooLarge(t *testing.T, err error, asked, current int64) {
	t.Helper()
	var se *storage.StorageError
	if !errors.As(err, &se) || se.Code != storage.TooLargeResourceVersion {
		t.Fatalf("err = %v, want TooLargeResourceVersion", err)
	}
	if se.ResourceVersion != asked || se.CurrentRevision < current || se.CurrentRevision >= asked {
		t.Errorf("TooLargeResourceVersion carries rv %d, current %d; want %d and at least %d", se.ResourceVersion, se.CurrentRevision, asked, current)
	}
}
