package etcd3

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/apictl/apictl/pkg/storage"
	"github.com/apictl/apictl/pkg/storage/internal/storagetest"
)

// next takes one event, failing the test if none comes: etcd delivers within milliseconds, the
// bound only keeps a broken watch from hanging the test.
func next(t *testing.T, ch <-chan storage.Event) storage.Event {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatal("the watch channel closed")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event")
	}
	return storage.Event{}
}

// closed waits for the channel to close, failing if an event comes instead.
func closed(t *testing.T, ch <-chan storage.Event) {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if ok {
			t.Fatalf("unexpected event %+v", ev)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the watch channel did not close")
	}
}

func describe(ev storage.Event) string {
	return fmt.Sprintf("%s %s=%s@%d", ev.Type, ev.Object.Key, ev.Object.Value, ev.Revision)
}

// wantAdded checks that the next event is the creation of kv.
func wantAdded(t *testing.T, ch <-chan storage.Event, kv storage.KeyValue) {
	t.Helper()
	want := describe(storage.Event{Type: storage.Added, Object: kv, Revision: kv.ModRevision})
	if got := describe(next(t, ch)); got != want {
		t.Errorf("event = %s, want %s", got, want)
	}
}

func TestWatchFromRevision(t *testing.T) {
	ctx := testContext(t)
	s := newStore(t, nil, Config{})
	start := fill(t, s, "pods/ns/", "before")
	a, _ := s.Create(ctx, "pods/ns/a", []byte("a1"), 0)
	b, _ := s.Create(ctx, "pods/ns/b", []byte("b1"), 0)
	fill(t, s, "pods/other/", "elsewhere")
	a2, err := s.GuaranteedUpdate(ctx, "pods/ns/a", func(storage.KeyValue) ([]byte, error) { return []byte("a2"), nil }, storage.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	del, err := s.Delete(ctx, "pods/ns/b", nil)
	if err != nil {
		t.Fatal(err)
	}

	ch, err := s.Watch(ctx, "pods/ns/", storage.WatchOptions{Revision: start})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		fmt.Sprintf("ADDED pods/ns/a=a1@%d", a.ModRevision),
		fmt.Sprintf("ADDED pods/ns/b=b1@%d", b.ModRevision),
		fmt.Sprintf("MODIFIED pods/ns/a=a2@%d", a2.ModRevision),
		fmt.Sprintf("DELETED pods/ns/b=b1@%d", del.ModRevision),
	}
	for i, w := range want {
		ev := next(t, ch)
		if got := describe(ev); got != w {
			t.Errorf("event %d = %s, want %s", i, got, w)
		}
		if ev.Object.ModRevision != ev.Revision {
			t.Errorf("event %d: object revision %d, event revision %d", i, ev.Object.ModRevision, ev.Revision)
		}
	}
	// A re-created key is Added again.
	again, _ := s.Create(ctx, "pods/ns/b", []byte("b2"), 0)
	wantAdded(t, ch, again)
}

// Revision 0 means from the call: a write right after Watch returns is always seen, none before it.
func TestWatchFromNow(t *testing.T) {
	ctx := testContext(t)
	s := newStore(t, nil, Config{})
	fill(t, s, "pods/ns/", "old")
	ch, err := s.Watch(ctx, "pods/ns/", storage.WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kv, _ := s.Create(ctx, "pods/ns/new", []byte("n"), 0)
	wantAdded(t, ch, kv)
}

func TestWatchFilter(t *testing.T) {
	ctx := testContext(t)
	s := newStore(t, nil, Config{})
	ch, err := s.Watch(ctx, "pods/ns/", storage.WatchOptions{Filter: func(kv storage.KeyValue) (bool, error) {
		return strings.HasPrefix(string(kv.Value), "keep"), nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	fill(t, s, "pods/ns/", "drop1")
	kept, _ := s.Create(ctx, "pods/ns/k", []byte("keep"), 0)
	wantAdded(t, ch, kept)

	sentinel := errors.New("cannot decode")
	failing, err := s.Watch(ctx, "pods/ns/", storage.WatchOptions{Filter: func(storage.KeyValue) (bool, error) { return false, sentinel }})
	if err != nil {
		t.Fatal(err)
	}
	fill(t, s, "pods/ns/", "x")
	if ev := next(t, failing); ev.Type != storage.Error || ev.Err != sentinel {
		t.Errorf("a failing filter gives %+v, want an Error event with the filter's error", ev)
	}
	closed(t, failing)
}

func TestWatchClosesWhenContextEnds(t *testing.T) {
	s := newStore(t, nil, Config{})
	ctx, cancel := context.WithCancel(testContext(t))
	ch, err := s.Watch(ctx, "pods/ns/", storage.WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	closed(t, ch)
}

// A reader that leaves the buffer full gets the buffered events, then TooSlow, then the end.
func TestWatchSlowReader(t *testing.T) {
	ctx := testContext(t)
	logs := storagetest.NewLogRecorder()
	s := newStore(t, nil, Config{WatchBufferSize: 3, Logger: slog.New(logs)})
	s.slowWatchGrace = 0
	ch, err := s.Watch(ctx, "pods/ns/", storage.WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fill(t, s, "pods/ns/", "a", "b", "c", "d", "e")
	// Reading before the watch gave up would make room and let it go on.
	logs.WaitFor(t, "ending a watch whose reader fell behind")
	var got []string
	for range 3 {
		got = append(got, next(t, ch).Object.Key)
	}
	if want := "pods/ns/a pods/ns/b pods/ns/c"; strings.Join(got, " ") != want {
		t.Errorf("buffered events %q, want %s", got, want)
	}
	ev := next(t, ch)
	if ev.Type != storage.Error || !storage.IsTooSlow(ev.Err) {
		t.Fatalf("after the buffer: %+v, want a TooSlow error", ev)
	}
	closed(t, ch)
}

func TestWatchAfterCompactionExpires(t *testing.T) {
	ctx := testContext(t)
	srv := storagetest.IsolatedEtcd(t)
	s := newStore(t, srv.ClientURLs(), Config{})
	start := fill(t, s, "pods/ns/", "a")
	fill(t, s, "pods/ns/", "b", "c")
	current, _ := s.CurrentRevision(ctx)
	if _, err := s.kv.Compact(ctx, current); err != nil {
		t.Fatal(err)
	}
	ch, err := s.Watch(ctx, "pods/ns/", storage.WatchOptions{Revision: start})
	if err != nil {
		t.Fatal(err)
	}
	ev := next(t, ch)
	var se *storage.StorageError
	if ev.Type != storage.Error || !errors.As(ev.Err, &se) || se.Code != storage.Expired {
		t.Fatalf("watch from a compacted revision: %+v, want an Expired error", ev)
	}
	if se.ResourceVersion != start || se.CurrentRevision != current || se.Error() != "The resourceVersion for the provided watch is too old." {
		t.Errorf("Expired carries rv %d, compacted %d, message %q", se.ResourceVersion, se.CurrentRevision, se.Error())
	}
	closed(t, ch)
}

func TestWatchInvalid(t *testing.T) {
	s := newStore(t, nil, Config{})
	for _, c := range []struct {
		prefix string
		opts   storage.WatchOptions
	}{{"", storage.WatchOptions{}}, {"pods/", storage.WatchOptions{Revision: -1}}} {
		if _, err := s.Watch(testContext(t), c.prefix, c.opts); !storage.IsInvalid(err) {
			t.Errorf("Watch(%q, %+v): err = %v, want Invalid", c.prefix, c.opts, err)
		}
	}
}
