package etcd3

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apictl/apictl/pkg/storage"
)

// The benchmarks compare the store with the same work done on a bare clientv3 client, on the shared
// embedded etcd (in this process: its allocations count too), with 8 goroutines (or GOMAXPROCS, if
// more).

// benchValue is about the size of a small ConfigMap's JSON.
var benchValue = []byte(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"bench","namespace":"default",` +
	`"uid":"6f1c2a4e-0c1b-4c55-9d3c-8a3b2f2e7d11","creationTimestamp":"2026-01-01T00:00:00Z"},` +
	`"data":{"key":"` + strings.Repeat("x", 300) + `"}}`)

// runParallel runs the operations that newWorker returns, one worker per goroutine; a worker's setup
// is not timed apart from the rest, but happens once per goroutine.
func runParallel(b *testing.B, newWorker func() (op func() error, err error)) {
	b.SetParallelism((8 + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		op, err := newWorker()
		if err != nil {
			b.Error(err)
			return
		}
		for pb.Next() {
			if err := op(); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func stateless(op func() error) func() (func() error, error) {
	return func() (func() error, error) { return op, nil }
}

type benchEnv struct {
	store  *Store
	raw    *clientv3.Client
	prefix string // the store's prefix, with its trailing "/", for raw keys
	n      atomic.Int64
}

func newBenchEnv(b *testing.B) *benchEnv {
	prefix := uniquePrefix(b) + "/"
	return &benchEnv{store: newStore(b, nil, Config{Prefix: prefix}), raw: rawClient(b, nil), prefix: prefix}
}

// key returns a new key under dir.
func (env *benchEnv) key(dir string) string {
	return dir + strconv.FormatInt(env.n.Add(1), 10)
}

func BenchmarkGet(b *testing.B) {
	env := newBenchEnv(b)
	ctx := context.Background()
	if _, err := env.store.Create(ctx, "configmaps/default/one", benchValue, 0); err != nil {
		b.Fatal(err)
	}
	b.Run("raw", func(b *testing.B) {
		runParallel(b, stateless(func() error {
			_, err := env.raw.Get(ctx, env.prefix+"configmaps/default/one")
			return err
		}))
	})
	b.Run("store", func(b *testing.B) {
		runParallel(b, stateless(func() error {
			_, err := env.store.Get(ctx, "configmaps/default/one", storage.GetOptions{})
			return err
		}))
	})
}

func BenchmarkList1000(b *testing.B) {
	env := newBenchEnv(b)
	ctx := context.Background()
	for i := range 1000 {
		if _, err := env.store.Create(ctx, fmt.Sprintf("configmaps/default/cm%04d", i), benchValue, 0); err != nil {
			b.Fatal(err)
		}
	}
	errShort := errors.New("the list is not 1000 items long")
	b.Run("raw", func(b *testing.B) {
		runParallel(b, stateless(func() error {
			resp, err := env.raw.Get(ctx, env.prefix+"configmaps/default/", clientv3.WithPrefix())
			if err == nil && len(resp.Kvs) != 1000 {
				err = errShort
			}
			return err
		}))
	})
	b.Run("store", func(b *testing.B) {
		runParallel(b, stateless(func() error {
			list, err := env.store.List(ctx, "configmaps/default/", storage.ListOptions{})
			if err == nil && len(list.Items) != 1000 {
				err = errShort
			}
			return err
		}))
	})
}

func BenchmarkCreate(b *testing.B) {
	env := newBenchEnv(b)
	ctx := context.Background()
	b.Run("raw-put", func(b *testing.B) {
		runParallel(b, stateless(func() error {
			_, err := env.raw.Put(ctx, env.prefix+env.key("configmaps/put/"), string(benchValue))
			return err
		}))
	})
	b.Run("raw-txn", func(b *testing.B) {
		runParallel(b, stateless(func() error {
			key := env.prefix + env.key("configmaps/txn/")
			_, err := env.raw.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
				Then(clientv3.OpPut(key, string(benchValue))).Commit()
			return err
		}))
	})
	b.Run("store", func(b *testing.B) {
		runParallel(b, stateless(func() error {
			_, err := env.store.Create(ctx, env.key("configmaps/store/"), benchValue, 0)
			return err
		}))
	})
}

// BenchmarkUpdate has each goroutine update a key of its own, so that it measures the update path
// rather than contention. The raw loop keeps the last revision it wrote, so it needs one round trip per
// update; GuaranteedUpdate reads first, as a handler without a cache must.
func BenchmarkUpdate(b *testing.B) {
	env := newBenchEnv(b)
	ctx := context.Background()
	errLost := errors.New("lost a compare-and-swap on a key of its own")
	b.Run("raw-cas", func(b *testing.B) {
		runParallel(b, func() (func() error, error) {
			key := env.prefix + env.key("configmaps/cas/")
			put, err := env.raw.Put(ctx, key, string(benchValue))
			if err != nil {
				return nil, err
			}
			rev := put.Header.Revision
			return func() error {
				resp, err := env.raw.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(key), "=", rev)).
					Then(clientv3.OpPut(key, string(benchValue))).Else(clientv3.OpGet(key)).Commit()
				if err == nil && !resp.Succeeded {
					err = errLost
				}
				if err == nil {
					rev = resp.Header.Revision
				}
				return err
			}, nil
		})
	})
	b.Run("store", func(b *testing.B) {
		runParallel(b, func() (func() error, error) {
			key := env.key("configmaps/update/")
			if _, err := env.store.Create(ctx, key, benchValue, 0); err != nil {
				return nil, err
			}
			flip := byte('x')
			return func() error {
				flip ^= 'x' ^ 'y'
				_, err := env.store.GuaranteedUpdate(ctx, key, func(cur storage.KeyValue) ([]byte, error) {
					next := append([]byte(nil), cur.Value...)
					next[len(next)-3] = flip
					return next, nil
				}, storage.UpdateOptions{})
				return err
			}, nil
		})
	})
}
