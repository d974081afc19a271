package cacher

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apictl/apictl/pkg/storage"
)

// The benchmarks run on the embedded etcd of this test binary (in this process: its CPU and
// allocations count too). BenchmarkFanOut is the watch target: run it with -benchtime=1000x
// for "1,000 watchers each receive 1,000 changes".

// BenchmarkFanOut measures a change made through the store reaching 1,000 watchers of the resource
// through the cacher's one watch: an op is one change delivered to every watcher, written by 8
// concurrent writers. It reports the delivery latency (from the start of the write to the receipt by
// a watcher) over every delivery, and the memory a watcher costs while idle.
func BenchmarkFanOut(b *testing.B) {
	for _, watchers := range []int{1, 1000} {
		b.Run(fmt.Sprintf("watchers=%d", watchers), func(b *testing.B) {
			f := newFaultStore(newEtcdStore(b, nil))
			c := startCacher(b, f, "configmaps/", Config{})
			idle := idleWatcherBytes(b, c, watchers)

			var mu sync.Mutex
			written := make(map[int64]time.Time, b.N)
			type receipt struct {
				rev int64
				at  time.Time
			}
			receipts := make([][]receipt, watchers)
			for i := range receipts {
				receipts[i] = make([]receipt, 0, b.N)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			start := c.Stats().Revision
			var done sync.WaitGroup
			for i := range watchers {
				w, err := c.WatchEvents(ctx, "configmaps/", WatchOptions{ResourceVersion: strconv.FormatInt(start, 10)})
				if err != nil {
					b.Fatal(err)
				}
				done.Go(func() {
					for len(receipts[i]) < b.N {
						ev, ok := <-w.Events()
						if !ok {
							b.Errorf("watcher %d closed", i)
							return
						}
						if ev.Type != Bookmark {
							receipts[i] = append(receipts[i], receipt{ev.Revision, time.Now()})
						}
					}
				})
			}
			b.ReportAllocs()
			b.ResetTimer()
			var writing sync.WaitGroup
			for wr := range 8 {
				writing.Go(func() {
					for j := wr; j < b.N; j += 8 {
						t0 := time.Now()
						kv, err := f.Create(context.Background(), fmt.Sprintf("configmaps/ns/k%07d", j), object("ns", "k", "v"), 0)
						if err != nil {
							b.Error(err)
							return
						}
						mu.Lock()
						written[kv.ModRevision] = t0
						mu.Unlock()
					}
				})
			}
			writing.Wait()
			done.Wait()
			b.StopTimer()

			latencies := make([]time.Duration, 0, watchers*b.N)
			for _, rs := range receipts {
				for _, r := range rs {
					latencies = append(latencies, r.at.Sub(written[r.rev]))
				}
			}
			slices.Sort(latencies)
			pct := func(p float64) float64 {
				return float64(latencies[int(p*float64(len(latencies)-1))]) / float64(time.Millisecond)
			}
			b.ReportMetric(pct(0.50), "p50-ms")
			b.ReportMetric(pct(0.99), "p99-ms")
			b.ReportMetric(idle, "idle-B/watcher")
			b.ReportMetric(float64(f.watches.Load()), "store-watches")
		})
	}
}

// idleWatcherBytes measures what n watchers cost while they wait, heap and stacks, per watcher.
func idleWatcherBytes(b *testing.B, c *Cacher, n int) float64 {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer func() {
		cancel()
		eventually(b, "the idle watchers end", func() bool { return c.Stats().Watchers == 0 })
	}()
	measure := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc + m.StackInuse
	}
	before := measure()
	watchers := make([]*Watcher, n)
	for i := range watchers {
		w, err := c.WatchEvents(ctx, "configmaps/", WatchOptions{ResourceVersion: strconv.FormatInt(c.Stats().Revision, 10)})
		if err != nil {
			b.Fatal(err)
		}
		watchers[i] = w
	}
	eventually(b, "the watchers start", func() bool { return c.Stats().Watchers == n })
	after := measure()
	runtime.KeepAlive(watchers)
	return float64(int64(after)-int64(before)) / float64(n)
}

// BenchmarkFanOutInMemory is the cacher's own share of a fan-out, without etcd: one change applied
// by the dispatcher and taken by 1,000 watchers' readers.
func BenchmarkFanOutInMemory(b *testing.B) {
	for _, watchers := range []int{1, 1000} {
		b.Run(fmt.Sprintf("watchers=%d", watchers), func(b *testing.B) {
			fanOutInMemory(b, watchers, object("ns", "k", "v"), WatchOptions{ResourceVersion: "1"})
		})
	}
}

// BenchmarkFanOutSelected is BenchmarkFanOutInMemory's 1,000 watchers, each with a label selector
// (that every object matches), as a plain Filter, which each watcher applies by decoding the object,
// and as a SharedFilter, whose reading of a change the watchers share.
func BenchmarkFanOutSelected(b *testing.B) {
	reader := &storage.Reader{Read: func(kv storage.KeyValue) (any, error) {
		var o struct {
			Metadata struct {
				Labels map[string]string `json:"labels"`
			} `json:"metadata"`
		}
		err := json.Unmarshal(kv.Value, &o)
		return o.Metadata.Labels, err
	}}
	shared := &storage.SharedFilter{Reader: reader, Match: func(read any) bool { return read.(map[string]string)["app"] == "x" }}
	value := object("ns", "k", "v", "app", "x")
	b.Run("filter", func(b *testing.B) {
		fanOutInMemory(b, 1000, value, WatchOptions{ResourceVersion: "1", Filter: labelFilter("app", "x")})
	})
	b.Run("shared", func(b *testing.B) {
		fanOutInMemory(b, 1000, value, WatchOptions{ResourceVersion: "1", Shared: shared})
	})
}

// fanOutInMemory measures the delivery of b.N creations of value to watchers watching with opts, on
// a cache fed directly (no etcd).
func fanOutInMemory(b *testing.B, watchers int, value []byte, opts WatchOptions) {
	c, err := New(nilStore{}, "configmaps/", Config{})
	if err != nil {
		b.Fatal(err)
	}
	feed := reflector{c: c}
	feed.replace(nil, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var done sync.WaitGroup
	progress := make([]atomic.Int64, watchers)
	for i := range watchers {
		w, err := c.WatchEvents(ctx, "configmaps/", opts)
		if err != nil {
			b.Fatal(err)
		}
		done.Go(func() {
			for progress[i].Load() < int64(b.N) {
				ev, ok := <-w.Events()
				if !ok || ev.Type == storage.Error {
					b.Errorf("watcher %d ended early", i)
					return
				}
				if ev.Type != Bookmark {
					progress[i].Add(1)
				}
			}
		})
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		rev := int64(i + 2)
		kv := storage.KeyValue{Key: fmt.Sprintf("configmaps/ns/k%07d", i), Value: value, ModRevision: rev}
		if _, err := feed.apply([]storage.Event{{Type: storage.Added, Object: kv, Revision: rev}}); err != nil {
			b.Fatal(err)
		}
		// Stay well within the watchers' allowed lag: etcd, slower than the readers, does.
		for i%64 == 0 && int64(i)-slowest(progress) > int64(c.cfg.MaxWatcherLag/2) {
			runtime.Gosched()
		}
	}
	done.Wait()
}

// BenchmarkList compares a list of 1,000 objects from the cache with the same list from etcd.
func BenchmarkList(b *testing.B) {
	s := newEtcdStore(b, nil)
	for i := range 1000 {
		create(b, s, fmt.Sprintf("configmaps/ns/k%04d", i), benchValue)
	}
	c := startCacher(b, s, "configmaps/", Config{})
	for _, tc := range []struct {
		name  string
		store storage.Store
		opts  storage.ListOptions
	}{
		{"cache rv=0", c, storage.ListOptions{ResourceVersion: "0"}},
		{"store rv=0", s, storage.ListOptions{ResourceVersion: "0"}},
		{"store rv=unset", s, storage.ListOptions{}},
		{"cache rv=0 limit=100", c, storage.ListOptions{ResourceVersion: "0", Limit: 100}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetParallelism((8 + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					res, err := tc.store.List(context.Background(), "configmaps/", tc.opts)
					if err != nil {
						b.Error(err)
						return
					}
					want := tc.opts.Limit
					if want == 0 {
						want = 1000
					}
					if int64(len(res.Items)) != want {
						b.Errorf("%d items, want %d", len(res.Items), want)
						return
					}
				}
			})
		})
	}
}

// BenchmarkWatchInitialEvents is the start of a watch with resourceVersion "0" of 1,000 objects: their
// Added events, encoded once for all watchers.
func BenchmarkWatchInitialEvents(b *testing.B) {
	s := newEtcdStore(b, nil)
	for i := range 1000 {
		create(b, s, fmt.Sprintf("configmaps/ns/k%04d", i), benchValue)
	}
	c := startCacher(b, s, "configmaps/", Config{})
	b.ReportAllocs()
	for b.Loop() {
		ctx, cancel := context.WithCancel(context.Background())
		w, err := c.WatchEvents(ctx, "configmaps/", WatchOptions{ResourceVersion: "0"})
		if err != nil {
			b.Fatal(err)
		}
		for range 1000 {
			if _, err := (<-w.Events()).WireJSON(); err != nil {
				b.Fatal(err)
			}
		}
		cancel()
	}
}

// BenchmarkIndexPut inserts keys in random order into an index of 10,000.
func BenchmarkIndexPut(b *testing.B) {
	keys := make([]*version, 10000)
	for i := range keys {
		keys[i] = newVersion(storage.KeyValue{Key: fmt.Sprintf("configmaps/ns/k%05d", i)})
	}
	rand.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	b.ReportAllocs()
	for b.Loop() {
		var x index
		for _, v := range keys {
			x.put(v)
		}
	}
}

// benchValue is about the size of a small ConfigMap's JSON.
var benchValue = []byte(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"bench","namespace":"default",` +
	`"uid":"6f1c2a4e-0c1b-4c55-9d3c-8a3b2f2e7d11","creationTimestamp":"2026-01-01T00:00:00Z"},` +
	`"data":{"key":"0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789"}}`)

// slowest returns the least of the readers' progress.
func slowest(progress []atomic.Int64) int64 {
	least := progress[0].Load()
	for i := range progress {
		least = min(least, progress[i].Load())
	}
	return least
}

// nilStore is a Store the in-memory benchmark never calls.
type nilStore struct{ storage.Store }
