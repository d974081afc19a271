package cacher

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apictl/apictl/pkg/storage"
	"github.com/apictl/apictl/pkg/storage/etcd3"
	"github.com/apictl/apictl/pkg/storage/internal/storagetest"
)

// sharedEndpoints is the etcd most tests of this binary share, each under a store prefix of its own.
// Tests that compact or stop etcd start their own (storagetest.IsolatedEtcd): compaction is cluster-wide.
var sharedEndpoints []string

func TestMain(m *testing.M) {
	os.Exit(storagetest.RunWithSharedEtcd("cacher", func(endpoints []string) int {
		sharedEndpoints = endpoints
		return m.Run()
	}))
}

// newEtcdStore connects to endpoints (the shared etcd when nil) under a prefix of the test's own.
func newEtcdStore(tb testing.TB, endpoints []string) *etcd3.Store {
	tb.Helper()
	if endpoints == nil {
		endpoints = sharedEndpoints
	}
	s, err := etcd3.New(testContext(tb), etcd3.Config{Endpoints: endpoints, Prefix: storagetest.Prefix(tb, "/cacher-test")})
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

// testContext ends with the test, and in any case well before the test binary's own timeout.
func testContext(tb testing.TB) context.Context { return storagetest.Context(tb, 2*time.Minute) }

// startCacher runs a cacher of prefix over store until the test ends, and waits until it is ready.
func startCacher(tb testing.TB, store storage.Store, prefix string, cfg Config) *Cacher {
	tb.Helper()
	c, err := New(store, prefix, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	tb.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			tb.Errorf("run: %v", err)
		}
	})
	select {
	case <-c.ready:
	case <-time.After(30 * time.Second):
		tb.Fatal("the cacher did not become ready")
	}
	return c
}

// faultStore wraps a store to count calls and to break its watches on demand.
type faultStore struct {
	storage.Store
	watches, lists, gets, progressRequests, cachedUpdates atomic.Int64
	// rewind is taken off the revisions the store reports, as if etcd had lost its latest writes.
	rewind atomic.Int64

	mu sync.Mutex
	// paused discards the events of the current watch, as if they were lost on the way.
	paused bool
	// held, while open, keeps new watches from starting.
	held chan struct{}
	// breaks ends the current watch with an Error event carrying the error sent on it; ended says
	// when the watch's goroutine has returned.
	breaks chan error
	ended  chan struct{}
}

func newFaultStore(s storage.Store) *faultStore {
	return &faultStore{Store: s, breaks: make(chan error), ended: make(chan struct{}, 100)}
}

func (f *faultStore) List(ctx context.Context, prefix string, opts storage.ListOptions) (*storage.ListResult, error) {
	f.lists.Add(1)
	res, err := f.Store.List(ctx, prefix, opts)
	if err == nil {
		res.Revision -= f.rewind.Load()
	}
	return res, err
}

func (f *faultStore) CurrentRevision(ctx context.Context) (int64, error) {
	rev, err := f.Store.CurrentRevision(ctx)
	return rev - f.rewind.Load(), err
}

// RequestWatchProgress forwards progress requests, so that the cacher serves consistent reads.
func (f *faultStore) RequestWatchProgress(ctx context.Context) error {
	f.progressRequests.Add(1)
	return f.Store.(storage.ProgressRequester).RequestWatchProgress(ctx)
}

// GuaranteedUpdate counts the updates that came with a cached value.
func (f *faultStore) GuaranteedUpdate(ctx context.Context, key string, tryUpdate storage.UpdateFunc, opts storage.UpdateOptions) (storage.KeyValue, error) {
	if opts.Cached != nil {
		f.cachedUpdates.Add(1)
	}
	return f.Store.GuaranteedUpdate(ctx, key, tryUpdate, opts)
}

// plainStore hides a store's progress requests: the cacher must then leave consistent reads to it.
type plainStore struct{ storage.Store }

func (f *faultStore) Get(ctx context.Context, key string, opts storage.GetOptions) (storage.KeyValue, error) {
	f.gets.Add(1)
	return f.Store.Get(ctx, key, opts)
}

func (f *faultStore) Watch(ctx context.Context, prefix string, opts storage.WatchOptions) (<-chan storage.Event, error) {
	f.mu.Lock()
	held := f.held
	f.mu.Unlock()
	if held != nil {
		select {
		case <-held:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	f.watches.Add(1)
	ctx, cancel := context.WithCancel(ctx)
	in, err := f.Store.Watch(ctx, prefix, opts)
	if err != nil {
		cancel()
		return nil, err
	}
	out := make(chan storage.Event)
	go func() {
		defer func() { f.ended <- struct{}{} }()
		defer close(out)
		defer cancel()
		for {
			select {
			case ev, ok := <-in:
				if !ok {
					return
				}
				f.mu.Lock()
				paused := f.paused
				f.mu.Unlock()
				if paused && ev.Type != storage.Error {
					continue
				}
				select {
				case out <- ev:
				case <-ctx.Done():
					return
				}
			case err := <-f.breaks:
				select {
				case out <- storage.Event{Type: storage.Error, Err: err}:
				case <-ctx.Done():
				}
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

func (f *faultStore) pause(on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.paused = on
}

// hold keeps new watches from starting until release, once the first one has started.
func (f *faultStore) hold(t *testing.T) {
	t.Helper()
	eventually(t, "the cacher watches the store", func() bool { return f.watches.Load() > 0 })
	f.mu.Lock()
	defer f.mu.Unlock()
	f.held = make(chan struct{})
}

func (f *faultStore) release() {
	f.mu.Lock()
	defer f.mu.Unlock()
	close(f.held)
	f.held = nil
}

// breakWatch ends the current watch with err and waits until its goroutine has returned.
func (f *faultStore) breakWatch(t *testing.T, err error) {
	t.Helper()
	select {
	case f.breaks <- err:
	case <-time.After(10 * time.Second):
		t.Fatal("no watch to break")
	}
	select {
	case <-f.ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the broken watch did not end")
	}
}

// object is the stored JSON of a namespaced object with labels, without resourceVersion.
func object(namespace, name, data string, labels ...string) []byte {
	meta := map[string]any{"name": name, "namespace": namespace}
	if len(labels) > 0 {
		l := map[string]string{}
		for i := 0; i+1 < len(labels); i += 2 {
			l[labels[i]] = labels[i+1]
		}
		meta["labels"] = l
	}
	b, err := json.Marshal(map[string]any{"kind": "ConfigMap", "apiVersion": "v1", "metadata": meta, "data": map[string]string{"v": data}})
	if err != nil {
		panic(err)
	}
	return b
}

// labelFilter selects the objects with label key=value, as the handlers' label selectors do.
func labelFilter(key, value string) storage.Filter {
	return func(kv storage.KeyValue) (bool, error) {
		var o struct {
			Metadata struct {
				Labels map[string]string `json:"labels"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(kv.Value, &o); err != nil {
			return false, err
		}
		return o.Metadata.Labels[key] == value, nil
	}
}

// dataOf returns the data value of an event's object, and checks that its resourceVersion is the
// event's revision.
func dataOf(t *testing.T, ev *Event) string {
	t.Helper()
	raw, err := ev.Object()
	if err != nil {
		t.Fatalf("%s %s: object: %v", ev.Type, ev.Key, err)
	}
	var o struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Data map[string]string `json:"data"`
	}
	if err := json.Unmarshal(raw, &o); err != nil {
		t.Fatalf("%s %s: %v in %s", ev.Type, ev.Key, err, raw)
	}
	if want := fmt.Sprint(ev.Revision); o.Metadata.ResourceVersion != want {
		t.Errorf("%s %s: resourceVersion %q in the object, event revision %s", ev.Type, ev.Key, o.Metadata.ResourceVersion, want)
	}
	return o.Data["v"]
}

// describe prints an event as TYPE key=data@revision (BOOKMARK@revision, ERROR: message).
func describe(t *testing.T, ev *Event) string {
	t.Helper()
	switch ev.Type {
	case Bookmark:
		if ev.InitialEventsEnd {
			return fmt.Sprintf("BOOKMARK(end)@%d", ev.Revision)
		}
		return fmt.Sprintf("BOOKMARK@%d", ev.Revision)
	case storage.Error:
		return "ERROR: " + ev.Err.Error()
	}
	return fmt.Sprintf("%s %s=%s@%d", ev.Type, ev.Key, dataOf(t, ev), ev.Revision)
}

// next takes one event, failing the test if none comes within a bound that only keeps a broken
// watch from hanging the test.
func next(t *testing.T, w *Watcher) *Event {
	t.Helper()
	select {
	case ev, ok := <-w.Events():
		if !ok {
			t.Fatal("the watch channel closed")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event")
	}
	return nil
}

// nextObject takes the next event that is not a Bookmark.
func nextObject(t *testing.T, w *Watcher) *Event {
	t.Helper()
	for {
		if ev := next(t, w); ev.Type != Bookmark {
			return ev
		}
	}
}

// expect checks that the next events, bookmarks skipped, are want.
func expect(t *testing.T, w *Watcher, want ...string) {
	t.Helper()
	for i, w1 := range want {
		if got := describe(t, nextObject(t, w)); got != w1 {
			t.Errorf("event %d = %s, want %s", i, got, w1)
		}
	}
}

// closed waits for the channel to close, failing if an event comes instead.
func closed(t *testing.T, w *Watcher) {
	t.Helper()
	select {
	case ev, ok := <-w.Events():
		if ok {
			t.Fatalf("unexpected event %s", describe(t, ev))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the watch channel did not close")
	}
}

// quiet checks that no event but bookmarks is waiting. It proves nothing about events still on their
// way: tests call it after an event that must come after them.
func quiet(t *testing.T, w *Watcher) {
	t.Helper()
	for {
		select {
		case ev, ok := <-w.Events():
			if !ok {
				t.Fatal("the watch channel closed")
			}
			if ev.Type != Bookmark {
				t.Fatalf("unexpected event %s", describe(t, ev))
			}
		default:
			return
		}
	}
}

func watch(t *testing.T, c *Cacher, prefix string, opts WatchOptions) *Watcher {
	t.Helper()
	w, err := c.WatchEvents(testContext(t), prefix, opts)
	if err != nil {
		t.Fatalf("watch %s %+v: %v", prefix, opts, err)
	}
	return w
}

func create(t testing.TB, s storage.Store, key string, value []byte) storage.KeyValue {
	t.Helper()
	kv, err := s.Create(context.Background(), key, value, 0)
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

func update(t testing.TB, s storage.Store, key string, value []byte) storage.KeyValue {
	t.Helper()
	kv, err := s.GuaranteedUpdate(context.Background(), key, func(storage.KeyValue) ([]byte, error) { return value, nil }, storage.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

func remove(t testing.TB, s storage.Store, key string) storage.KeyValue {
	t.Helper()
	kv, err := s.Delete(context.Background(), key, nil)
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

// eventually polls cond until it holds or the bound passes: for effects the cacher applies in its own
// time, without asserting how long they take.
func eventually(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("%s: not within 20s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitRevision waits until the cache has reached rev.
func waitRevision(tb testing.TB, c *Cacher, rev int64) {
	tb.Helper()
	eventually(tb, fmt.Sprintf("the cache reaches revision %d", rev), func() bool { return c.Stats().Revision >= rev })
}

// expectError checks that the next event is an Error whose error has code and message.
func expectError(t *testing.T, w *Watcher, code storage.ErrorCode, message string) *Event {
	t.Helper()
	ev := nextObject(t, w)
	if ev.Type != storage.Error || storage.CodeOf(ev.Err) != code {
		t.Fatalf("event %s, want an Error with code %s", describe(t, ev), code)
	}
	if message != "" && ev.Err.Error() != message {
		t.Errorf("error message %q, want %q", ev.Err.Error(), message)
	}
	var se *storage.StorageError
	if !errors.As(ev.Err, &se) {
		t.Errorf("the error %v carries no *storage.StorageError", ev.Err)
	}
	return ev
}
