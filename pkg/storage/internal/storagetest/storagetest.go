// Package storagetest starts embedded etcds for the tests of the storage packages.
package storagetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
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
