package cacher

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/apictl/apictl/pkg/storage"
	"github.com/apictl/apictl/pkg/storage/embedded"
	"github.com/apictl/apictl/pkg/storage/internal/storagetest"
)

var (
	errUnavailable = &storage.StorageError{Code: storage.Unavailable, Op: "watch", Err: fmt.Errorf("etcd lost its leader")}
	errCompacted   = &storage.StorageError{Code: storage.Expired, Op: "watch"}
)

// When the underlying watch fails, the cacher watches again from its revision: changes made
// meanwhile arrive once, in order, without a re-list, and watchers notice nothing.
func TestResumeAfterWatchFailure(t *testing.T) {
	s := newEtcdStore(t, nil)
	f := newFaultStore(s)
	c := startCacher(t, f, "configmaps/", Config{})
	w := watch(t, c, "configmaps/", WatchOptions{})
	before := create(t, s, "configmaps/ns/a", object("ns", "a", "a1"))
	expect(t, w, fmt.Sprintf("ADDED configmaps/ns/a=a1@%d", before.ModRevision))

	f.hold(t)
	f.pause(true)
	lost := update(t, s, "configmaps/ns/a", object("ns", "a", "a2"))
	f.breakWatch(t, errUnavailable)
	f.pause(false)
	f.release()
	after := create(t, s, "configmaps/ns/b", object("ns", "b", "b1"))
	expect(t, w,
		fmt.Sprintf("MODIFIED configmaps/ns/a=a2@%d", lost.ModRevision),
		fmt.Sprintf("ADDED configmaps/ns/b=b1@%d", after.ModRevision))
	quiet(t, w)
	if lists, watches := f.lists.Load(), f.watches.Load(); lists != 1 || watches != 2 {
		t.Errorf("%d lists and %d watches of the store, want 1 and 2", lists, watches)
	}
}

// When the store no longer has the cache's revision, the cacher lists again. What changed meanwhile
// is a gap: watchers it concerns get Expired, the others go on, across the gap too.
func TestRelistAfterExpired(t *testing.T) {
	s := newEtcdStore(t, nil)
	create(t, s, "configmaps/a/x", object("a", "x", "x1", "app", "web"))
	create(t, s, "configmaps/b/y", object("b", "y", "y1"))
	f := newFaultStore(s)
	c := startCacher(t, f, "configmaps/", Config{})
	listed := c.Stats().Revision
	inA := watch(t, c, "configmaps/a/", WatchOptions{ResourceVersion: strconv.FormatInt(listed, 10)})
	inB := watch(t, c, "configmaps/b/", WatchOptions{ResourceVersion: strconv.FormatInt(listed, 10)})
	unselected := watch(t, c, "configmaps/", WatchOptions{ResourceVersion: strconv.FormatInt(listed, 10), Filter: labelFilter("app", "db")})
	selected := watch(t, c, "configmaps/", WatchOptions{ResourceVersion: strconv.FormatInt(listed, 10), Filter: labelFilter("app", "web")})

	f.hold(t)
	f.pause(true)
	update(t, s, "configmaps/a/x", object("a", "x", "x2", "app", "web"))
	create(t, s, "configmaps/a/new", object("a", "new", "n"))
	f.breakWatch(t, errCompacted)
	f.pause(false)
	f.release()
	eventually(t, "the cacher lists again", func() bool { return c.Stats().Revision > listed })
	relisted := c.Stats().Revision
	if n := f.lists.Load(); n != 2 {
		t.Errorf("%d lists, want 2", n)
	}

	want := fmt.Sprintf("too old resource version: %d (%d)", listed, relisted)
	expectError(t, inA, storage.Expired, want)
	closed(t, inA)
	expectError(t, selected, storage.Expired, want)
	closed(t, selected)

	y2 := update(t, s, "configmaps/b/y", object("b", "y", "y2"))
	expect(t, inB, fmt.Sprintf("MODIFIED configmaps/b/y=y2@%d", y2.ModRevision))
	db := create(t, s, "configmaps/b/db", object("b", "db", "d", "app", "db"))
	expect(t, unselected, fmt.Sprintf("ADDED configmaps/b/db=d@%d", db.ModRevision))

	// A watch from before the gap that the gap does not concern is served across it.
	w := watch(t, c, "configmaps/b/", WatchOptions{ResourceVersion: strconv.FormatInt(listed, 10)})
	expect(t, w, fmt.Sprintf("MODIFIED configmaps/b/y=y2@%d", y2.ModRevision))
	// One it concerns expires, from before the gap or inside it.
	for _, rv := range []int64{listed, relisted - 1} {
		w = watch(t, c, "configmaps/a/", WatchOptions{ResourceVersion: strconv.FormatInt(rv, 10)})
		expectError(t, w, storage.Expired, "")
	}
	// The cache holds the re-listed state.
	res, err := c.List(context.Background(), "configmaps/a/", storage.ListOptions{ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	if got := keysOf(res.Items); strings.Join(got, " ") != "configmaps/a/new configmaps/a/x" {
		t.Errorf("cached keys after the re-list: %v", got)
	}
}

// A real compaction of the revision the cacher would resume from makes it list again.
func TestRelistAfterCompaction(t *testing.T) {
	srv := storagetest.IsolatedEtcd(t)
	s := newEtcdStore(t, srv.ClientURLs())
	create(t, s, "configmaps/a/x", object("a", "x", "x1"))
	f := newFaultStore(s)
	c := startCacher(t, f, "configmaps/", Config{})
	inA := watch(t, c, "configmaps/a/", WatchOptions{})
	inB := watch(t, c, "configmaps/b/", WatchOptions{})
	nextObject(t, inA)

	f.hold(t)
	f.pause(true)
	update(t, s, "configmaps/a/x", object("a", "x", "x2"))
	last := create(t, s, "configmaps/a/new", object("a", "new", "n"))
	f.breakWatch(t, errUnavailable)
	if err := compact(testContext(t), srv.ClientURLs(), last.ModRevision); err != nil {
		t.Fatal(err)
	}
	f.pause(false)
	f.release()
	expectError(t, inA, storage.Expired, "")
	closed(t, inA)
	b := create(t, s, "configmaps/b/y", object("b", "y", "y1"))
	expect(t, inB, fmt.Sprintf("ADDED configmaps/b/y=y1@%d", b.ModRevision))
	if n := f.lists.Load(); n != 2 {
		t.Errorf("%d lists, want 2", n)
	}
}

// etcd stopping and coming back on the same address: watchers go on.
func TestEtcdRestart(t *testing.T) {
	ctx := testContext(t)
	dir := t.TempDir()
	srv, err := embedded.Start(ctx, embedded.Config{Dir: dir, UnsafeNoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close(context.Background()) })
	endpoints := srv.ClientURLs()
	s := newEtcdStore(t, endpoints)
	c := startCacher(t, s, "configmaps/", Config{})
	w := watch(t, c, "configmaps/", WatchOptions{})
	before := create(t, s, "configmaps/ns/a", object("ns", "a", "a1"))
	expect(t, w, fmt.Sprintf("ADDED configmaps/ns/a=a1@%d", before.ModRevision))

	if err := srv.Close(ctx); err != nil {
		t.Fatal(err)
	}
	storagetest.RestartEtcd(t, dir, endpoints[0])
	var after storage.KeyValue
	eventually(t, "the store reconnects", func() bool {
		var err error
		after, err = s.Create(ctx, "configmaps/ns/b", object("ns", "b", "b1"), 0)
		return err == nil
	})
	expect(t, w, fmt.Sprintf("ADDED configmaps/ns/b=b1@%d", after.ModRevision))
}

// etcd's revision going back (a restore from backup): every watcher ends with Expired, new ones work.
func TestResetWhenRevisionGoesBack(t *testing.T) {
	s := newEtcdStore(t, nil)
	create(t, s, "configmaps/ns/a", object("ns", "a", "a1"))
	f := newFaultStore(s)
	c := startCacher(t, f, "configmaps/", Config{})
	old := watch(t, c, "configmaps/", WatchOptions{})
	nextObject(t, old)
	before := c.Stats().Revision

	f.rewind.Store(before / 2)
	f.breakWatch(t, errUnavailable)
	expectError(t, old, storage.Expired, fmt.Sprintf("the storage's revision went back from %d to %d (was etcd restored from a backup?): "+
		"resourceVersion %d is not valid any more; list again", before, before-before/2, before))
	closed(t, old)
	f.rewind.Store(0)

	fresh := watch(t, c, "configmaps/", WatchOptions{})
	if ev := nextObject(t, fresh); ev.Key != "configmaps/ns/a" {
		t.Errorf("after the reset, initial event %s", describe(t, ev))
	}
	b := create(t, s, "configmaps/ns/b", object("ns", "b", "b1"))
	// The store's watch from the rewound revision replays what the cache had; the new watcher's
	// initial state already holds it, so the first change it sees may be a replay of a.
	for {
		ev := nextObject(t, fresh)
		if ev.Key == b.Key {
			break
		}
	}
}
