package cacher

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/apictl/apictl/pkg/storage"
)

// fanOut is the scale scenario: watchers watchers of one resource, changes changes made by
// writers concurrent writers. It returns the revisions of the changes in order; each watcher's
// received revisions go to receive.
func fanOut(tb testing.TB, c *Cacher, s storage.Store, watchers, changes, writers int, receive func(w int, ev *Event)) []int64 {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := c.Stats().Revision
	var done sync.WaitGroup
	for i := range watchers {
		w, err := c.WatchEvents(ctx, "configmaps/", WatchOptions{ResourceVersion: fmt.Sprint(start)})
		if err != nil {
			tb.Fatal(err)
		}
		done.Go(func() {
			for n := 0; n < changes; {
				ev, ok := <-w.Events()
				if !ok {
					tb.Errorf("watcher %d: closed after %d events", i, n)
					return
				}
				if ev.Type == Bookmark {
					continue
				}
				receive(i, ev)
				n++
			}
		})
	}
	revs := make([]int64, changes)
	var writing sync.WaitGroup
	for wr := range writers {
		writing.Go(func() {
			for j := wr; j < changes; j += writers {
				kv, err := s.Create(context.Background(), fmt.Sprintf("configmaps/ns/k%05d", j), object("ns", "k", fmt.Sprint(j)), 0)
				if err != nil {
					tb.Error(err)
					return
				}
				revs[j] = kv.ModRevision
			}
		})
	}
	writing.Wait()
	done.Wait()
	slices.Sort(revs)
	return revs
}

// A thousand watchers of one resource each receive every one of a thousand changes, in order, from
// one watch of the store. Timing is the benchmark's business (BenchmarkFanOut).
func TestFanOutThousandWatchers(t *testing.T) {
	watchers, changes := 1000, 1000
	if testing.Short() {
		watchers, changes = 100, 200
	}
	f := newFaultStore(newEtcdStore(t, nil))
	c := startCacher(t, f, "configmaps/", Config{})
	got := make([][]int64, watchers)
	for i := range got {
		got[i] = make([]int64, 0, changes)
	}
	revs := fanOut(t, c, f, watchers, changes, 8, func(w int, ev *Event) {
		if ev.Type != storage.Added {
			t.Errorf("watcher %d: %s event", w, ev.Type)
		}
		got[w] = append(got[w], ev.Revision)
	})
	for i, g := range got {
		if !slices.Equal(g, revs) {
			t.Fatalf("watcher %d received revisions %v..., want %v...", i, g[:min(5, len(g))], revs[:min(5, len(revs))])
		}
	}
	if n := f.watches.Load(); n != 1 {
		t.Errorf("%d watches of the store for %d watchers, want 1", n, watchers)
	}
}
