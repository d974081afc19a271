package cacher

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/apictl/apictl/pkg/storage"
)

func TestNewInvalid(t *testing.T) {
	s := newEtcdStore(t, nil)
	for _, prefix := range []string{"", "/"} {
		if _, err := New(s, prefix, Config{}); err == nil {
			t.Errorf("New with prefix %q: no error", prefix)
		}
	}
	if _, err := New(nil, "configmaps/", Config{}); err == nil {
		t.Error("New without a store: no error")
	}
	c, err := New(s, "example.com/widgets", Config{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Prefix() != "example.com/widgets/" {
		t.Errorf("prefix %q, want it ended in /", c.Prefix())
	}
}

// Before its first list, the cacher passes gets and paged lists without a filter to the store, as
// kube's does since KEP-4568, and lets a watch and any other list wait at most WaitTimeout, then fail
// with Initializing (429).
func TestNotReady(t *testing.T) {
	s := newEtcdStore(t, nil)
	kv := create(t, s, "configmaps/ns/a", object("ns", "a", "a1"))
	f := newFaultStore(s)
	c, err := New(f, "configmaps/", Config{WaitTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WatchEvents(testContext(t), "configmaps/", WatchOptions{}); storage.CodeOf(err) != storage.Initializing {
		t.Errorf("watch before the first list: %v, want Initializing", err)
	}
	all := func(storage.KeyValue) (bool, error) { return true, nil }
	for _, tc := range []struct {
		name  string
		opts  storage.ListOptions
		store bool
	}{
		{"paged", storage.ListOptions{ResourceVersion: "0", Limit: 10}, true},
		{"paged consistent", storage.ListOptions{Limit: 10}, true},
		{"unpaged", storage.ListOptions{ResourceVersion: "0"}, false},
		{"unpaged consistent", storage.ListOptions{}, false},
		{"paged with a filter", storage.ListOptions{Limit: 10, Filter: all}, false},
	} {
		before := f.lists.Load()
		res, err := c.List(context.Background(), "configmaps/", tc.opts)
		switch {
		case tc.store && (err != nil || len(res.Items) != 1 || f.lists.Load() != before+1):
			t.Errorf("%s list before the first list: %v, %d store lists; want the store's answer", tc.name, err, f.lists.Load()-before)
		case !tc.store && (storage.CodeOf(err) != storage.Initializing || f.lists.Load() != before):
			t.Errorf("%s list before the first list: %v, %d store lists; want Initializing and none", tc.name, err, f.lists.Load()-before)
		}
	}
	if got, err := c.Get(context.Background(), kv.Key, storage.GetOptions{ResourceVersion: "0"}); err != nil || got.ModRevision != kv.ModRevision || f.gets.Load() != 1 {
		t.Errorf("get before the first list: %v, %d store gets; want the store's answer", err, f.gets.Load())
	}
	if c.Stats().Ready {
		t.Error("ready before Run")
	}
}

func TestRunTwice(t *testing.T) {
	c := startCacher(t, newEtcdStore(t, nil), "configmaps/", Config{})
	if err := c.Run(context.Background()); err == nil {
		t.Error("a second Run gave no error")
	}
}

// When Run's context ends, every watch ends, whatever its reader does, and no goroutine is left.
func TestStopEndsWatchesAndGoroutines(t *testing.T) {
	s := newEtcdStore(t, nil)
	fillKeys(t, s, "ns", "a", "b", "c")
	// Let the store's own connections settle before counting.
	if _, err := s.List(context.Background(), "configmaps/", storage.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	baseline := runtime.NumGoroutine()

	c, err := New(s, "configmaps/", Config{WatcherBuffer: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	var watchers []*Watcher
	var stores []<-chan storage.Event
	for i := range 20 {
		// Readers that never read, with initial events and without.
		rv := ""
		if i%2 == 1 {
			rv = "0"
		}
		watchers = append(watchers, watch(t, c, fmt.Sprintf("configmaps/ns%d/", i%3), WatchOptions{ResourceVersion: rv}))
		watchers = append(watchers, watch(t, c, "configmaps/", WatchOptions{ResourceVersion: rv, SendInitialEvents: true}))
		ch, err := c.Watch(testContext(t), "configmaps/", storage.WatchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		stores = append(stores, ch)
	}
	fillKeys(t, s, "ns", "d", "e", "f")
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return")
	}
	for _, w := range watchers {
		for range w.Events() {
		}
	}
	for _, ch := range stores {
		for range ch {
		}
	}
	if n := c.Stats().Watchers; n != 0 {
		t.Errorf("%d watchers after Run returned", n)
	}
	if _, err := c.WatchEvents(testContext(t), "configmaps/", WatchOptions{}); !storage.IsUnavailable(err) {
		t.Errorf("watch of a stopped cacher: %v, want Unavailable", err)
	}
	eventually(t, fmt.Sprintf("goroutines back to %d", baseline), func() bool { return runtime.NumGoroutine() <= baseline })
}
