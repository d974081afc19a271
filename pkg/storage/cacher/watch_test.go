package cacher

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apictl/apictl/pkg/storage"
	"github.com/apictl/apictl/pkg/storage/internal/storagetest"
)

// resourceVersion unset and "0": an Added event per object of the current state, in key order, then
// the changes; a delete carries the last state at the delete's revision.
func TestWatchInitialEventsThenChanges(t *testing.T) {
	for _, rv := range []string{"", "0"} {
		t.Run("rv="+rv, func(t *testing.T) {
			s := newEtcdStore(t, nil)
			b := create(t, s, "configmaps/ns/b", object("ns", "b", "b1"))
			a := create(t, s, "configmaps/ns/a", object("ns", "a", "a1"))
			c := startCacher(t, s, "configmaps/", Config{})
			w := watch(t, c, "configmaps/", WatchOptions{ResourceVersion: rv})
			expect(t, w,
				fmt.Sprintf("ADDED configmaps/ns/a=a1@%d", a.ModRevision),
				fmt.Sprintf("ADDED configmaps/ns/b=b1@%d", b.ModRevision))
			quiet(t, w)

			a2 := update(t, s, "configmaps/ns/a", object("ns", "a", "a2"))
			d := remove(t, s, "configmaps/ns/b")
			n := create(t, s, "configmaps/other/n", object("other", "n", "n1"))
			expect(t, w,
				fmt.Sprintf("MODIFIED configmaps/ns/a=a2@%d", a2.ModRevision),
				fmt.Sprintf("DELETED configmaps/ns/b=b1@%d", d.ModRevision),
				fmt.Sprintf("ADDED configmaps/other/n=n1@%d", n.ModRevision))
		})
	}
}

// "N": exactly the changes after N, from the window, whatever the current state.
func TestWatchFromRevision(t *testing.T) {
	s := newEtcdStore(t, nil)
	c := startCacher(t, s, "configmaps/", Config{})
	a := create(t, s, "configmaps/ns/a", object("ns", "a", "a1"))
	b := create(t, s, "configmaps/ns/b", object("ns", "b", "b1"))
	a2 := update(t, s, "configmaps/ns/a", object("ns", "a", "a2"))
	d := remove(t, s, "configmaps/ns/b")
	waitRevision(t, c, d.ModRevision)

	w := watch(t, c, "configmaps/", WatchOptions{ResourceVersion: strconv.FormatInt(a.ModRevision, 10)})
	expect(t, w,
		fmt.Sprintf("ADDED configmaps/ns/b=b1@%d", b.ModRevision),
		fmt.Sprintf("MODIFIED configmaps/ns/a=a2@%d", a2.ModRevision),
		fmt.Sprintf("DELETED configmaps/ns/b=b1@%d", d.ModRevision))
	quiet(t, w)
	a3 := update(t, s, "configmaps/ns/a", object("ns", "a", "a3"))
	expect(t, w, fmt.Sprintf("MODIFIED configmaps/ns/a=a3@%d", a3.ModRevision))

	// From the cache's own revision: nothing from the past.
	w = watch(t, c, "configmaps/", WatchOptions{ResourceVersion: strconv.FormatInt(a3.ModRevision, 10)})
	a4 := update(t, s, "configmaps/ns/a", object("ns", "a", "a4"))
	expect(t, w, fmt.Sprintf("MODIFIED configmaps/ns/a=a4@%d", a4.ModRevision))
}

// A namespace prefix sees only its namespace.
func TestWatchNamespace(t *testing.T) {
	s := newEtcdStore(t, nil)
	create(t, s, "configmaps/ns/a", object("ns", "a", "a1"))
	create(t, s, "configmaps/nsx/a", object("nsx", "a", "x1"))
	c := startCacher(t, s, "configmaps/", Config{})
	w := watch(t, c, "configmaps/ns", WatchOptions{})
	first := nextObject(t, w)
	if first.Key != "configmaps/ns/a" {
		t.Fatalf("initial event for %s", first.Key)
	}
	create(t, s, "configmaps/nsx/b", object("nsx", "b", "x"))
	create(t, s, "configmaps/other/b", object("other", "b", "x"))
	b := create(t, s, "configmaps/ns/b", object("ns", "b", "b1"))
	expect(t, w, fmt.Sprintf("ADDED configmaps/ns/b=b1@%d", b.ModRevision))
	quiet(t, w)

	if _, err := c.WatchEvents(testContext(t), "secrets/ns/", WatchOptions{}); !storage.IsInvalid(err) {
		t.Errorf("watch of another resource: %v, want Invalid", err)
	}
}

// A revision older than the window gets kube's Expired error event, then the end.
func TestWatchExpired(t *testing.T) {
	s := newEtcdStore(t, nil)
	before := create(t, s, "configmaps/ns/before", object("ns", "before", "x"))
	c := startCacher(t, s, "configmaps/", Config{WindowSize: 4})
	listed := c.Stats().Revision

	// Older than the cache's first list: the cache cannot know what happened since.
	w := watch(t, c, "configmaps/", WatchOptions{ResourceVersion: strconv.FormatInt(before.ModRevision-1, 10)})
	expectError(t, w, storage.Expired, fmt.Sprintf("too old resource version: %d (%d)", before.ModRevision-1, listed))
	closed(t, w)

	var last storage.KeyValue
	revs := make([]int64, 0, 8)
	for i := range 8 {
		last = create(t, s, fmt.Sprintf("configmaps/ns/k%d", i), object("ns", "k", "v"))
		revs = append(revs, last.ModRevision)
	}
	waitRevision(t, c, last.ModRevision)
	oldest := c.Stats().Oldest
	if oldest != revs[3] {
		t.Fatalf("with a window of 4 after 8 changes the oldest revision is %d, want %d", oldest, revs[3])
	}
	w = watch(t, c, "configmaps/", WatchOptions{ResourceVersion: strconv.FormatInt(revs[2], 10)})
	ev := expectError(t, w, storage.Expired, fmt.Sprintf("too old resource version: %d (%d)", revs[2], oldest))
	if !storage.IsExpired(ev.Err) {
		t.Error("storage.IsExpired does not see the error")
	}
	closed(t, w)

	// The oldest revision itself is still served.
	w = watch(t, c, "configmaps/", WatchOptions{ResourceVersion: strconv.FormatInt(oldest, 10)})
	for _, rev := range revs[4:] {
		if ev := nextObject(t, w); ev.Revision != rev {
			t.Errorf("from the oldest revision: event at %d, want %d", ev.Revision, rev)
		}
	}
}

// A revision etcd has not reached: the watch waits for it (writes to other resources count) and
// starts after it, or fails with TooLargeResourceVersion.
func TestWatchFutureRevision(t *testing.T) {
	s := newEtcdStore(t, nil)
	c := startCacher(t, s, "configmaps/", Config{WaitTimeout: 300 * time.Millisecond})
	current, err := s.CurrentRevision(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	future := current + 1000
	_, err = c.WatchEvents(testContext(t), "configmaps/", WatchOptions{ResourceVersion: strconv.FormatInt(future, 10)})
	var se *storage.StorageError
	if !errors.As(err, &se) || se.Code != storage.TooLargeResourceVersion || se.ResourceVersion != future || se.CurrentRevision < current {
		t.Fatalf("watch from %d with etcd at %d: %v, want TooLargeResourceVersion", future, current, err)
	}

	// Two revisions ahead, reached by writes to another resource during the wait.
	c = startCacher(t, s, "configmaps/", Config{WaitTimeout: time.Minute})
	current, _ = s.CurrentRevision(context.Background())
	target := current + 2
	started := make(chan *Watcher)
	go func() {
		w, err := c.WatchEvents(testContext(t), "configmaps/", WatchOptions{ResourceVersion: strconv.FormatInt(target, 10)})
		if err != nil {
			t.Error(err)
		}
		started <- w
	}()
	create(t, s, "secrets/ns/a", object("ns", "a", "s"))
	create(t, s, "secrets/ns/b", object("ns", "b", "s"))
	w := <-started
	if w == nil {
		return
	}
	kv := create(t, s, "configmaps/ns/a", object("ns", "a", "a1"))
	expect(t, w, fmt.Sprintf("ADDED configmaps/ns/a=a1@%d", kv.ModRevision))
}

// sendInitialEvents: the initial state (at least as new as asked), a Bookmark ending it, the changes.
func TestWatchSendInitialEvents(t *testing.T) {
	s := newEtcdStore(t, nil)
	a := create(t, s, "configmaps/ns/a", object("ns", "a", "a1"))
	f := newFaultStore(s)
	c := startCacher(t, f, "configmaps/", Config{})

	t.Run("cache fresh", func(t *testing.T) {
		for _, rv := range []string{"0", strconv.FormatInt(a.ModRevision, 10)} {
			lists := f.lists.Load()
			w := watch(t, c, "configmaps/", WatchOptions{ResourceVersion: rv, SendInitialEvents: true})
			if got, want := describe(t, next(t, w)), fmt.Sprintf("ADDED configmaps/ns/a=a1@%d", a.ModRevision); got != want {
				t.Errorf("rv %s: %s, want %s", rv, got, want)
			}
			end := next(t, w)
			if end.Type != Bookmark || !end.InitialEventsEnd || end.Revision < a.ModRevision {
				t.Errorf("rv %s: after the initial events %s, want the end bookmark at %d or later", rv, describe(t, end), a.ModRevision)
			}
			if f.lists.Load() != lists {
				t.Errorf("rv %s: the store was listed although the cache is fresh enough", rv)
			}
		}
	})

	t.Run("consistent", func(t *testing.T) {
		// A write to another resource moves etcd past the cache, which cannot know it is still fresh.
		other := create(t, s, "secrets/ns/x", object("ns", "x", "s"))
		w := watch(t, c, "configmaps/", WatchOptions{SendInitialEvents: true})
		expect(t, w, fmt.Sprintf("ADDED configmaps/ns/a=a1@%d", a.ModRevision))
		end := next(t, w)
		if end.Type != Bookmark || !end.InitialEventsEnd || end.Revision < other.ModRevision {
			t.Fatalf("after the initial events %s, want the end bookmark at %d or later", describe(t, end), other.ModRevision)
		}
		b := create(t, s, "configmaps/ns/b", object("ns", "b", "b1"))
		a2 := update(t, s, "configmaps/ns/a", object("ns", "a", "a2"))
		expect(t, w,
			fmt.Sprintf("ADDED configmaps/ns/b=b1@%d", b.ModRevision),
			fmt.Sprintf("MODIFIED configmaps/ns/a=a2@%d", a2.ModRevision))
		quiet(t, w)
	})

	t.Run("with filter", func(t *testing.T) {
		create(t, s, "configmaps/ns/sel", object("ns", "sel", "s1", "app", "x"))
		rev, _ := s.CurrentRevision(context.Background())
		waitRevision(t, c, rev)
		w := watch(t, c, "configmaps/", WatchOptions{ResourceVersion: "0", SendInitialEvents: true, Filter: labelFilter("app", "x")})
		if ev := next(t, w); ev.Key != "configmaps/ns/sel" {
			t.Errorf("first initial event %s, want the selected object only", describe(t, ev))
		}
		if ev := next(t, w); ev.Type != Bookmark || !ev.InitialEventsEnd {
			t.Errorf("then %s, want the end bookmark", describe(t, ev))
		}
	})
}

// A label filter is applied to both states of a change: entering is Added, leaving is Deleted with
// the last selected state at the change's revision, staying is Modified.
func TestWatchFilterTransitions(t *testing.T) {
	s := newEtcdStore(t, nil)
	create(t, s, "configmaps/ns/in", object("ns", "in", "i1", "app", "x"))
	create(t, s, "configmaps/ns/out", object("ns", "out", "o1", "app", "y"))
	c := startCacher(t, s, "configmaps/", Config{})
	w := watch(t, c, "configmaps/", WatchOptions{Filter: labelFilter("app", "x")})
	if ev := nextObject(t, w); ev.Key != "configmaps/ns/in" {
		t.Fatalf("initial event %s, want configmaps/ns/in only", describe(t, ev))
	}

	enters := update(t, s, "configmaps/ns/out", object("ns", "out", "o2", "app", "x"))
	stays := update(t, s, "configmaps/ns/out", object("ns", "out", "o3", "app", "x"))
	leaves := update(t, s, "configmaps/ns/out", object("ns", "out", "o4", "app", "y"))
	update(t, s, "configmaps/ns/out", object("ns", "out", "o5", "app", "y"))
	create(t, s, "configmaps/ns/never", object("ns", "never", "n1"))
	deleted := remove(t, s, "configmaps/ns/in")
	expect(t, w,
		fmt.Sprintf("ADDED configmaps/ns/out=o2@%d", enters.ModRevision),
		fmt.Sprintf("MODIFIED configmaps/ns/out=o3@%d", stays.ModRevision),
		fmt.Sprintf("DELETED configmaps/ns/out=o3@%d", leaves.ModRevision),
		fmt.Sprintf("DELETED configmaps/ns/in=i1@%d", deleted.ModRevision))
	quiet(t, w)

	// A filter that fails ends the watch with its error.
	broken := errors.New("cannot decode")
	w = watch(t, c, "configmaps/", WatchOptions{ResourceVersion: strconv.FormatInt(deleted.ModRevision, 10),
		Filter: func(storage.KeyValue) (bool, error) { return false, broken }})
	create(t, s, "configmaps/ns/any", object("ns", "any", "x"))
	if ev := next(t, w); ev.Type != storage.Error || !errors.Is(ev.Err, broken) {
		t.Errorf("with a failing filter: %s, want an Error with the filter's error", describe(t, ev))
	}
	closed(t, w)
}

// Periodic bookmarks carry the cache's revision; one comes on request too.
func TestWatchBookmarks(t *testing.T) {
	s := newEtcdStore(t, nil)
	c := startCacher(t, s, "configmaps/", Config{BookmarkInterval: 20 * time.Millisecond})
	kv := create(t, s, "configmaps/ns/a", object("ns", "a", "a1"))
	waitRevision(t, c, kv.ModRevision)
	w := watch(t, c, "configmaps/", WatchOptions{ResourceVersion: strconv.FormatInt(kv.ModRevision, 10)})
	ev := next(t, w)
	if ev.Type != Bookmark || ev.Revision != kv.ModRevision || ev.InitialEventsEnd {
		t.Errorf("periodic bookmark %s, want BOOKMARK@%d", describe(t, ev), kv.ModRevision)
	}
	if _, err := ev.Object(); err != nil {
		t.Errorf("a bookmark's Object: %v, want none and no error", err)
	}
	if _, err := ev.WireJSON(); err == nil {
		t.Error("a bookmark's WireJSON gave no error: the handler encodes bookmarks")
	}

	c = startCacher(t, s, "configmaps/", Config{})
	w = watch(t, c, "configmaps/", WatchOptions{ResourceVersion: strconv.FormatInt(kv.ModRevision, 10)})
	w.RequestBookmark()
	if ev := next(t, w); ev.Type != Bookmark || ev.Revision < kv.ModRevision {
		t.Errorf("requested bookmark %s, want BOOKMARK@%d or later", describe(t, ev), kv.ModRevision)
	}
}

// Every watcher of a change gets the same event, and its encodings are computed once.
func TestWatchSharesEvents(t *testing.T) {
	s := newEtcdStore(t, nil)
	c := startCacher(t, s, "configmaps/", Config{})
	w1 := watch(t, c, "configmaps/", WatchOptions{})
	w2 := watch(t, c, "configmaps/ns/", WatchOptions{})
	kv := create(t, s, "configmaps/ns/a", object("ns", "a", "a1"))
	e1, e2 := nextObject(t, w1), nextObject(t, w2)
	if e1 != e2 {
		t.Fatal("two watchers got different events for one change")
	}
	o1, _ := e1.Object()
	o2, _ := e2.Object()
	l1, err := e1.WireJSON()
	if err != nil {
		t.Fatal(err)
	}
	l2, _ := e2.WireJSON()
	if &o1[0] != &o2[0] || &l1[0] != &l2[0] {
		t.Error("the encodings of one event are computed twice")
	}
	want := fmt.Sprintf(`{"type":"ADDED","object":%s}`+"\n", o1)
	if string(l1) != want {
		t.Errorf("wire line %s, want %s", l1, want)
	}
	if got := e1.KeyValue(); got.Key != kv.Key || string(got.Value) != string(kv.Value) || got.ModRevision != kv.ModRevision {
		t.Errorf("KeyValue %+v, want the stored %+v", got, kv)
	}

	// A later watcher's initial event for the same version is that same event.
	w3 := watch(t, c, "configmaps/", WatchOptions{ResourceVersion: "0"})
	if e3 := nextObject(t, w3); e3 != e1 {
		t.Error("the initial event of an unchanged object is not the event of its creation")
	}
}

// Events come in revision order, and each key's in the order of its writes, under concurrent writers.
func TestWatchOrdering(t *testing.T) {
	s := newEtcdStore(t, nil)
	c := startCacher(t, s, "configmaps/", Config{})
	w := watch(t, c, "configmaps/", WatchOptions{})
	const writers, writes = 8, 25
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			key := fmt.Sprintf("configmaps/ns/k%d", i)
			create(t, s, key, object("ns", "k", "0"))
			for j := 1; j < writes; j++ {
				update(t, s, key, object("ns", "k", strconv.Itoa(j)))
			}
		})
	}
	wg.Wait()
	var last int64
	seen := map[string]int{}
	for range writers * writes {
		ev := nextObject(t, w)
		if ev.Revision <= last {
			t.Fatalf("event at %d after one at %d", ev.Revision, last)
		}
		last = ev.Revision
		if got, want := dataOf(t, ev), strconv.Itoa(seen[ev.Key]); got != want {
			t.Fatalf("%s: write %s, want %s", ev.Key, got, want)
		}
		seen[ev.Key]++
	}
	quiet(t, w)
}

// A reader that does not read is cut off with TooSlow once it falls MaxWatcherLag changes behind; a
// reader that keeps up gets everything; neither holds up the other.
func TestWatchSlowReaderIsCutOff(t *testing.T) {
	s := newEtcdStore(t, nil)
	logs := storagetest.NewLogRecorder()
	c := startCacher(t, s, "configmaps/", Config{WindowSize: 64, WatcherBuffer: 2, MaxWatcherLag: 5, Logger: slog.New(logs)})
	slow := watch(t, c, "configmaps/", WatchOptions{})
	fast := watch(t, c, "configmaps/", WatchOptions{})
	const n = 20
	revs := make([]int64, n)
	for i := range n {
		revs[i] = create(t, s, fmt.Sprintf("configmaps/ns/k%02d", i), object("ns", "k", strconv.Itoa(i))).ModRevision
		if ev := nextObject(t, fast); ev.Revision != revs[i] {
			t.Fatalf("fast reader: event at %d, want %d", ev.Revision, revs[i])
		}
	}
	// Reading before the cut-off would make room and let the slow watcher go on.
	logs.WaitFor(t, "cutting off a watcher whose reader fell behind")
	for i := range 2 {
		if ev := nextObject(t, slow); ev.Revision != revs[i] {
			t.Errorf("slow reader's buffered event at %d, want %d", ev.Revision, revs[i])
		}
	}
	ev := expectError(t, slow, storage.TooSlow, "")
	if want := fmt.Sprintf("watch again from resourceVersion %d", revs[1]); !strings.Contains(ev.Err.Error(), want) {
		t.Errorf("TooSlow says %q; want it to say %q", ev.Err, want)
	}
	closed(t, slow)
	eventually(t, "the slow watcher's goroutine ends", func() bool { return c.Stats().Watchers == 1 })
}

// The storage.Store watch: the changes after a revision (after etcd's current one for 0), objects as
// stored, no bookmarks.
func TestStoreWatch(t *testing.T) {
	s := newEtcdStore(t, nil)
	a := create(t, s, "configmaps/ns/a", object("ns", "a", "a1"))
	c := startCacher(t, s, "configmaps/", Config{BookmarkInterval: 10 * time.Millisecond})
	var st storage.Store = c
	ch, err := st.Watch(testContext(t), "configmaps/", storage.WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b := create(t, s, "configmaps/ns/b", object("ns", "b", "b1"))
	d := remove(t, s, "configmaps/ns/a")
	for _, want := range []storage.Event{
		{Type: storage.Added, Revision: b.ModRevision, Object: b},
		{Type: storage.Deleted, Revision: d.ModRevision, Object: storage.KeyValue{Key: a.Key, Value: a.Value, ModRevision: d.ModRevision}},
	} {
		select {
		case got := <-ch:
			if got.Type != want.Type || got.Revision != want.Revision || got.Object.Key != want.Object.Key ||
				string(got.Object.Value) != string(want.Object.Value) || got.Object.ModRevision != want.Object.ModRevision {
				t.Errorf("event %+v, want %+v", got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no event")
		}
	}

	ch, err = st.Watch(testContext(t), "configmaps/", storage.WatchOptions{Revision: a.ModRevision})
	if err != nil {
		t.Fatal(err)
	}
	if ev := <-ch; ev.Revision != b.ModRevision {
		t.Errorf("from revision %d: first event at %d, want %d", a.ModRevision, ev.Revision, b.ModRevision)
	}
	if _, err := st.Watch(testContext(t), "configmaps/", storage.WatchOptions{Revision: -1}); !storage.IsInvalid(err) {
		t.Errorf("negative revision: %v, want Invalid", err)
	}
}

// A watch ends when its context does, and its goroutine with it.
func TestWatchEndsWithContext(t *testing.T) {
	s := newEtcdStore(t, nil)
	c := startCacher(t, s, "configmaps/", Config{})
	ctx, cancel := context.WithCancel(testContext(t))
	w, err := c.WatchEvents(ctx, "configmaps/", WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Stats().Watchers != 1 {
		t.Fatalf("%d watchers, want 1", c.Stats().Watchers)
	}
	cancel()
	closed(t, w)
	eventually(t, "the watcher's goroutine ends", func() bool { return c.Stats().Watchers == 0 })
}

// Watchers whose filters share a Reader read each change once between them, and select as a plain
// filter would: the transitions of TestWatchFilterTransitions, for watchers of two selectors.
func TestWatchSharedFilter(t *testing.T) {
	s := newEtcdStore(t, nil)
	start := create(t, s, "configmaps/ns/in", object("ns", "in", "i1", "app", "x"))
	c := startCacher(t, s, "configmaps/", Config{})
	var reads atomic.Int64
	reader := &storage.Reader{Read: func(kv storage.KeyValue) (any, error) {
		reads.Add(1)
		var o struct {
			Metadata struct {
				Labels map[string]string `json:"labels"`
			} `json:"metadata"`
		}
		err := json.Unmarshal(kv.Value, &o)
		return o.Metadata.Labels["app"], err
	}}
	selecting := func(app string) *storage.SharedFilter {
		return &storage.SharedFilter{Reader: reader, Match: func(read any) bool { return read == app }}
	}
	const each = 5
	var xs, ys []*Watcher
	for range each {
		rv := strconv.FormatInt(start.ModRevision, 10)
		xs = append(xs, watch(t, c, "configmaps/", WatchOptions{ResourceVersion: rv, Shared: selecting("x")}))
		ys = append(ys, watch(t, c, "configmaps/", WatchOptions{ResourceVersion: rv, Shared: selecting("y")}))
	}
	created := create(t, s, "configmaps/ns/out", object("ns", "out", "o1", "app", "y"))
	enters := update(t, s, "configmaps/ns/out", object("ns", "out", "o2", "app", "x"))
	leaves := update(t, s, "configmaps/ns/out", object("ns", "out", "o3", "app", "y"))
	deleted := remove(t, s, "configmaps/ns/in")
	for _, w := range xs {
		expect(t, w,
			fmt.Sprintf("ADDED configmaps/ns/out=o2@%d", enters.ModRevision),
			fmt.Sprintf("DELETED configmaps/ns/out=o2@%d", leaves.ModRevision),
			fmt.Sprintf("DELETED configmaps/ns/in=i1@%d", deleted.ModRevision))
	}
	for _, w := range ys {
		expect(t, w,
			fmt.Sprintf("ADDED configmaps/ns/out=o1@%d", created.ModRevision),
			fmt.Sprintf("DELETED configmaps/ns/out=o1@%d", enters.ModRevision),
			fmt.Sprintf("ADDED configmaps/ns/out=o3@%d", leaves.ModRevision))
	}
	// The states of the four changes: a creation (1), two updates (2 each), a delete (1).
	if got := reads.Load(); got != 6 {
		t.Errorf("%d watchers read the changes' states %d times, want once each: 6", 2*each, got)
	}
}
