package cacher

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/apictl/apictl/pkg/storage"
	"github.com/apictl/apictl/pkg/storage/embedded"
	"github.com/apictl/apictl/pkg/storage/etcd3"
)

// privateEtcdStore starts an embedded etcd as `apictl serve` runs it (private: TLS with a client
// certificate) and returns a store on it; both stop when the benchmark ends.
func privateEtcdStore(b *testing.B) storage.Store {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := embedded.Start(ctx, embedded.Config{Dir: filepath.Join(b.TempDir(), "etcd"), UnsafeNoFsync: true, Private: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := srv.Close(context.Background()); err != nil {
			b.Errorf("stop etcd: %v", err)
		}
	})
	creds, _ := srv.ClientCredentials()
	s, err := etcd3.New(ctx, etcd3.Config{Endpoints: srv.ClientURLs(), CAFile: creds.CAFile, CertFile: creds.CertFile, KeyFile: creds.KeyFile})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := s.Close(); err != nil {
			b.Errorf("close store: %v", err)
		}
	})
	return s
}

// BenchmarkFill is a watch cache's start over 50,000 stored ConfigMaps, from Run to Ready, on an etcd
// reached as `apictl serve` reaches its own: the first list read in chunks that etcd streams (the
// etcd3 store) and with one whole list (a store that cannot stream).
func BenchmarkFill(b *testing.B) {
	const objects = 50000
	s := privateEtcdStore(b)
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Go(func() {
			for i := w; i < objects; i += 16 {
				create(b, s, fmt.Sprintf("configmaps/ns%d/k%05d", i%50, i), benchValue)
			}
		})
	}
	wg.Wait()
	for _, tc := range []struct {
		name  string
		store storage.Store
	}{
		{"chunked", s},
		{"whole", plainStore{s}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c, err := New(tc.store, "configmaps/", Config{})
				if err != nil {
					b.Fatal(err)
				}
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				go func() { done <- c.Run(ctx) }()
				<-c.Ready()
				cancel()
				if err := <-done; err != nil {
					b.Fatal(err)
				}
				if n := c.Stats().Objects; n != objects {
					b.Fatalf("%d objects cached, want %d", n, objects)
				}
			}
		})
	}
}
