package cacher

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apictl/apictl/pkg/storage"
	"github.com/apictl/apictl/pkg/storage/internal/storagetest"
)

// fillKeys creates prefix+name for each name and returns the revision of the last write.
func fillKeys(t testing.TB, s storage.Store, namespace string, names ...string) int64 {
	t.Helper()
	var rev int64
	for _, n := range names {
		rev = create(t, s, "configmaps/"+namespace+"/"+n, object(namespace, n, n)).ModRevision
	}
	return rev
}

func keysOf(items []storage.KeyValue) []string {
	keys := make([]string, len(items))
	for i, kv := range items {
		keys[i] = kv.Key
	}
	return keys
}

// pages lists every page of a list and returns the pages' keys and the continue tokens.
func pages(t *testing.T, st storage.Store, prefix string, opts storage.ListOptions) ([][]string, *storage.ListResult) {
	t.Helper()
	var out [][]string
	var first *storage.ListResult
	for {
		res, err := st.List(context.Background(), prefix, opts)
		if err != nil {
			t.Fatalf("list %s %+v: %v", prefix, opts, err)
		}
		if first == nil {
			first = res
		} else if res.Revision != first.Revision {
			t.Errorf("page at revision %d, the list's is %d", res.Revision, first.Revision)
		}
		out = append(out, keysOf(res.Items))
		if res.Continue == "" {
			return out, first
		}
		opts = storage.ListOptions{Continue: res.Continue, Limit: opts.Limit, Filter: opts.Filter}
	}
}

// A resourceVersion="0" list comes from memory and pages as the etcd3 store's does: same keys, same
// values, same page boundaries and remaining counts.
func TestListFromCacheMatchesStore(t *testing.T) {
	s := newEtcdStore(t, nil)
	fillKeys(t, s, "a", "k1", "k2", "k3", "k4", "k5")
	fillKeys(t, s, "b", "k1", "k2")
	f := newFaultStore(s)
	c := startCacher(t, f, "configmaps/", Config{})
	rev := fillKeys(t, s, "a", "k0")
	waitRevision(t, c, rev)
	lists := f.lists.Load()

	for _, tc := range []struct {
		name   string
		prefix string
		limit  int64
		filter storage.Filter
	}{
		{"all", "configmaps/", 0, nil},
		{"namespace", "configmaps/a/", 0, nil},
		{"pages", "configmaps/", 3, nil},
		{"namespace pages", "configmaps/a", 2, nil},
		{"filtered pages", "configmaps/", 2, func(kv storage.KeyValue) (bool, error) { return kv.Key != "configmaps/a/k2", nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, first := pages(t, c, tc.prefix, storage.ListOptions{ResourceVersion: "0", Limit: tc.limit, Filter: tc.filter})
			want, wantFirst := pages(t, s, tc.prefix, storage.ListOptions{ResourceVersion: "0", Limit: tc.limit, Filter: tc.filter})
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("pages %v, the store's %v", got, want)
			}
			if first.Revision != rev {
				t.Errorf("revision %d, want the cache's %d", first.Revision, rev)
			}
			if (first.RemainingItemCount == nil) != (wantFirst.RemainingItemCount == nil) ||
				first.RemainingItemCount != nil && *first.RemainingItemCount != *wantFirst.RemainingItemCount {
				t.Errorf("remaining %v, the store's %v", first.RemainingItemCount, wantFirst.RemainingItemCount)
			}
		})
	}
	if n := f.lists.Load() - lists; n != 0 {
		t.Errorf("%d lists reached the store", n)
	}

	res, err := c.List(context.Background(), "configmaps/", storage.ListOptions{ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	stored, err := s.List(context.Background(), "configmaps/", storage.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, kv := range res.Items {
		if want := stored.Items[i]; kv.Key != want.Key || string(kv.Value) != string(want.Value) || kv.ModRevision != want.ModRevision {
			t.Errorf("item %d: %s@%d %s, the store's %s@%d %s", i, kv.Key, kv.ModRevision, kv.Value, want.Key, want.ModRevision, want.Value)
		}
	}
}

// The next page of a cached list is the state at the list's revision, whatever changed since.
func TestListContinueIsConsistent(t *testing.T) {
	s := newEtcdStore(t, nil)
	fillKeys(t, s, "ns", "a", "b", "c", "d", "e")
	f := newFaultStore(s)
	c := startCacher(t, f, "configmaps/", Config{})
	first, err := c.List(context.Background(), "configmaps/", storage.ListOptions{ResourceVersion: "0", Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got := keysOf(first.Items); !slices.Equal(got, []string{"configmaps/ns/a", "configmaps/ns/b"}) {
		t.Fatalf("first page %v", got)
	}
	update(t, s, "configmaps/ns/c", object("ns", "c", "changed"))
	remove(t, s, "configmaps/ns/d")
	create(t, s, "configmaps/ns/bb", object("ns", "bb", "new"))
	last := remove(t, s, "configmaps/ns/e")
	waitRevision(t, c, last.ModRevision)

	lists := f.lists.Load()
	got, _ := pages(t, c, "configmaps/", storage.ListOptions{Continue: first.Continue, Limit: 2})
	if want := "[[configmaps/ns/c configmaps/ns/d] [configmaps/ns/e]]"; fmt.Sprint(got) != want {
		t.Errorf("the rest at the first page's revision: %v, want %s", got, want)
	}
	second, err := c.List(context.Background(), "configmaps/", storage.ListOptions{Continue: first.Continue, Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if string(second.Items[0].Value) != string(object("ns", "c", "c")) || second.Revision != first.Revision {
		t.Errorf("continued page at %d holds %s; want the value at %d", second.Revision, second.Items[0].Value, first.Revision)
	}
	if second.RemainingItemCount == nil || *second.RemainingItemCount != 1 {
		t.Errorf("remaining %v, want 1", second.RemainingItemCount)
	}
	if n := f.lists.Load() - lists; n != 0 {
		t.Errorf("%d lists reached the store", n)
	}
}

// Past the window, the store reads the next page at the token's revision; if etcd compacted that
// revision too, the answer is Expired with a token that goes on from the same key.
func TestListContinueBeyondWindow(t *testing.T) {
	srv := storagetest.IsolatedEtcd(t)
	s := newEtcdStore(t, srv.ClientURLs())
	fillKeys(t, s, "ns", "a", "b", "c", "d", "e")
	f := newFaultStore(s)
	c := startCacher(t, f, "configmaps/", Config{WindowSize: 2})
	first, err := c.List(context.Background(), "configmaps/", storage.ListOptions{ResourceVersion: "0", Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	remove(t, s, "configmaps/ns/c")
	update(t, s, "configmaps/ns/d", object("ns", "d", "changed"))
	last := create(t, s, "configmaps/ns/f", object("ns", "f", "f"))
	waitRevision(t, c, last.ModRevision)

	lists := f.lists.Load()
	got, _ := pages(t, c, "configmaps/", storage.ListOptions{Continue: first.Continue, Limit: 2})
	if want := "[[configmaps/ns/c configmaps/ns/d] [configmaps/ns/e]]"; fmt.Sprint(got) != want {
		t.Errorf("the rest at the first page's revision: %v, want %s", got, want)
	}
	if f.lists.Load() == lists {
		t.Error("the store was not asked for a page the window cannot answer")
	}

	if err := compact(testContext(t), srv.ClientURLs(), last.ModRevision); err != nil {
		t.Fatal(err)
	}
	_, err = c.List(context.Background(), "configmaps/", storage.ListOptions{Continue: first.Continue, Limit: 2})
	var se *storage.StorageError
	if !storage.IsExpired(err) || !errors.As(err, &se) || se.Continue == "" {
		t.Fatalf("continue at a compacted revision: %v, want Expired with a continue token", err)
	}
	got, _ = pages(t, c, "configmaps/", storage.ListOptions{Continue: se.Continue, Limit: 2})
	if want := "[[configmaps/ns/d configmaps/ns/e] [configmaps/ns/f]]"; fmt.Sprint(got) != want {
		t.Errorf("the rest from the Expired token: %v, want %s", got, want)
	}
}

// What the cache cannot answer as the API asks goes to the store.
func TestListPassesThrough(t *testing.T) {
	s := newEtcdStore(t, nil)
	fillKeys(t, s, "ns", "a", "b", "c")
	f := newFaultStore(s)
	c := startCacher(t, f, "configmaps/", Config{})
	rev := c.Stats().Revision
	for _, tc := range []struct {
		name  string
		opts  storage.ListOptions
		store bool
	}{
		{"latest", storage.ListOptions{}, false},
		{"any", storage.ListOptions{ResourceVersion: "0"}, false},
		{"any not older", storage.ListOptions{ResourceVersion: "0", ResourceVersionMatch: storage.MatchNotOlderThan}, false},
		{"not older than the cache", storage.ListOptions{ResourceVersion: strconv.FormatInt(rev, 10)}, false},
		{"not older, paged", storage.ListOptions{ResourceVersion: strconv.FormatInt(rev, 10), ResourceVersionMatch: storage.MatchNotOlderThan, Limit: 1}, false},
		{"newer than the cache", storage.ListOptions{ResourceVersion: strconv.FormatInt(rev+1, 10), ResourceVersionMatch: storage.MatchNotOlderThan}, true},
		{"exact", storage.ListOptions{ResourceVersion: strconv.FormatInt(rev, 10), ResourceVersionMatch: storage.MatchExact}, true},
		{"legacy exact", storage.ListOptions{ResourceVersion: strconv.FormatInt(rev, 10), Limit: 1}, true},
	} {
		lists := f.lists.Load()
		if _, err := c.List(context.Background(), "configmaps/", tc.opts); err != nil && !storage.IsTooLargeResourceVersion(err) {
			t.Errorf("%s: %v", tc.name, err)
		}
		if stored := f.lists.Load() != lists; stored != tc.store {
			t.Errorf("%s: answered by the store %v, want %v", tc.name, stored, tc.store)
		}
	}

	// The store's continue tokens go back to the store.
	page, err := f.Store.List(context.Background(), "configmaps/", storage.ListOptions{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := pages(t, c, "configmaps/", storage.ListOptions{Continue: page.Continue, Limit: 1})
	if want := "[[configmaps/ns/b] [configmaps/ns/c]]"; fmt.Sprint(got) != want {
		t.Errorf("pages after the store's token: %v, want %s", got, want)
	}
	// Another resource is the store's business.
	lists := f.lists.Load()
	if _, err := c.List(context.Background(), "secrets/", storage.ListOptions{ResourceVersion: "0"}); err != nil {
		t.Fatal(err)
	}
	if f.lists.Load() == lists {
		t.Error("a list of another resource did not reach the store")
	}
}

func TestListInvalid(t *testing.T) {
	s := newEtcdStore(t, nil)
	fillKeys(t, s, "ns", "a", "b")
	c := startCacher(t, s, "configmaps/", Config{})
	page, err := c.List(context.Background(), "configmaps/", storage.ListOptions{ResourceVersion: "0", Limit: 1})
	if err != nil || page.Continue == "" {
		t.Fatalf("first page: %v, continue %q", err, page.Continue)
	}
	for _, tc := range []struct {
		prefix string
		opts   storage.ListOptions
		code   storage.ErrorCode
	}{
		{"configmaps/", storage.ListOptions{Continue: page.Continue, ResourceVersion: "5"}, storage.Invalid},
		{"configmaps/", storage.ListOptions{Continue: page.Continue, ResourceVersionMatch: storage.MatchNotOlderThan}, storage.Invalid},
		{"configmaps/ns/", storage.ListOptions{Continue: page.Continue}, storage.InvalidContinue},
		{"configmaps/", storage.ListOptions{Continue: "not a token"}, storage.InvalidContinue},
		{"configmaps/", storage.ListOptions{ResourceVersion: "0", ResourceVersionMatch: storage.MatchExact}, storage.Invalid},
	} {
		if _, err := c.List(context.Background(), tc.prefix, tc.opts); storage.CodeOf(err) != tc.code {
			t.Errorf("list %s %+v: %v, want %s", tc.prefix, tc.opts, err, tc.code)
		}
	}
}

// Get with resourceVersion "0" (or one the cache has reached) is answered from memory; consistent
// reads are TestConsistentReads'.
func TestGet(t *testing.T) {
	s := newEtcdStore(t, nil)
	kv := create(t, s, "configmaps/ns/a", object("ns", "a", "a1"))
	f := newFaultStore(s)
	c := startCacher(t, f, "configmaps/", Config{})
	for _, rv := range []string{"0", strconv.FormatInt(kv.ModRevision, 10)} {
		got, err := c.Get(context.Background(), "configmaps/ns/a", storage.GetOptions{ResourceVersion: rv})
		if err != nil || string(got.Value) != string(kv.Value) || got.ModRevision != kv.ModRevision {
			t.Errorf("get rv %s: %+v, %v", rv, got, err)
		}
	}
	if _, err := c.Get(context.Background(), "configmaps/ns/missing", storage.GetOptions{ResourceVersion: "0"}); !storage.IsNotFound(err) {
		t.Errorf("get of a missing key: %v, want NotFound", err)
	}
	if n := f.gets.Load(); n != 0 {
		t.Errorf("%d gets reached the store", n)
	}
	for _, rv := range []string{strconv.FormatInt(kv.ModRevision+100, 10)} {
		gets := f.gets.Load()
		_, err := c.Get(context.Background(), "configmaps/ns/a", storage.GetOptions{ResourceVersion: rv})
		if err != nil && !storage.IsTooLargeResourceVersion(err) {
			t.Errorf("get rv %q: %v", rv, err)
		}
		if f.gets.Load() == gets {
			t.Errorf("get rv %q did not reach the store", rv)
		}
	}
}

// compact compacts etcd at endpoints to rev.
func compact(ctx context.Context, endpoints []string, rev int64) error {
	client, err := clientv3.New(clientv3.Config{Endpoints: endpoints})
	if err != nil {
		return err
	}
	defer client.Close()
	_, err = client.Compact(ctx, rev)
	return err
}

// A token from another server's cache that is ahead of this one: the store answers at the token's
// revision, so the pages stay consistent.
func TestListContinueFromCacheAhead(t *testing.T) {
	s := newEtcdStore(t, nil)
	fillKeys(t, s, "ns", "a", "b", "c")
	ahead := startCacher(t, s, "configmaps/", Config{})
	f := newFaultStore(s)
	behind := startCacher(t, f, "configmaps/", Config{})
	f.pause(true)
	last := update(t, s, "configmaps/ns/c", object("ns", "c", "changed"))
	waitRevision(t, ahead, last.ModRevision)
	first, err := ahead.List(context.Background(), "configmaps/", storage.ListOptions{ResourceVersion: "0", Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	remove(t, s, "configmaps/ns/c")

	lists := f.lists.Load()
	next, err := behind.List(context.Background(), "configmaps/", storage.ListOptions{Continue: first.Continue, Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(next.Items) != 1 || string(next.Items[0].Value) != string(object("ns", "c", "changed")) || next.Revision != first.Revision {
		t.Errorf("the next page from the cache behind: %v at %d; want c as it was at %d", keysOf(next.Items), next.Revision, first.Revision)
	}
	if f.lists.Load() == lists {
		t.Error("the cache behind the token answered it from memory")
	}
}

// While the cacher is not serving, before its first list and after it stopped, the store answers its
// lists, the cacher's own continue tokens included: the token goes on with the same list.
func TestListContinueWhenNotServing(t *testing.T) {
	s := newEtcdStore(t, nil)
	fillKeys(t, s, "ns", "a", "b", "c")
	f := newFaultStore(s)
	stopped, err := New(f, "configmaps/", Config{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- stopped.Run(ctx) }()
	select {
	case <-stopped.ready:
	case <-time.After(30 * time.Second):
		t.Fatal("the cacher did not become ready")
	}
	first, err := stopped.List(context.Background(), "configmaps/", storage.ListOptions{ResourceVersion: "0", Limit: 1})
	if err != nil || first.Continue == "" {
		t.Fatalf("first page: %v, continue %q", err, first.Continue)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
	notReady, err := New(f, "configmaps/", Config{})
	if err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name string
		c    *Cacher
	}{{"before the first list", notReady}, {"after stopping", stopped}} {
		lists := f.lists.Load()
		got, res := pages(t, tc.c, "configmaps/", storage.ListOptions{Continue: first.Continue, Limit: 1})
		if want := "[[configmaps/ns/b] [configmaps/ns/c]]"; fmt.Sprint(got) != want || res.Revision != first.Revision {
			t.Errorf("%s: pages after the cacher's token %v at %d, want %s at %d", tc.name, got, res.Revision, want, first.Revision)
		}
		if f.lists.Load() == lists {
			t.Errorf("%s: the store did not answer", tc.name)
		}
	}
}

// An unpaged list asked for as a stream hands over the same items as a gathered one, at the list's
// revision whatever is written while it is read, and filtered; a paged one is gathered as before.
func TestListStreamed(t *testing.T) {
	s := newEtcdStore(t, nil)
	rev := fillKeys(t, s, "a", "k1", "k2", "k3", "k4")
	c := startCacher(t, s, "configmaps/", Config{})
	waitRevision(t, c, rev)
	skipK2 := func(kv storage.KeyValue) (bool, error) { return kv.Key != "configmaps/a/k2", nil }
	written := 0
	for _, tc := range []struct {
		name   string
		filter storage.Filter
		want   []string
	}{
		{"all", nil, []string{"configmaps/a/k1", "configmaps/a/k2", "configmaps/a/k3", "configmaps/a/k4"}},
		{"filtered", skipK2, []string{"configmaps/a/k1", "configmaps/a/k3", "configmaps/a/k4"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The keys the earlier cases wrote.
			for i := range written {
				tc.want = append(tc.want, fmt.Sprintf("configmaps/a/k0-%d", i))
			}
			slices.Sort(tc.want)
			for _, rv := range []string{"", "0"} {
				res, err := c.List(context.Background(), "configmaps/", storage.ListOptions{ResourceVersion: rv, Filter: tc.filter, Stream: true})
				if err != nil {
					t.Fatal(err)
				}
				if res.Stream == nil || res.Items != nil {
					t.Fatalf("rv=%q: an unpaged streamed list from the cache came gathered", rv)
				}
				// Written after the list was taken: not in it.
				added := fmt.Sprintf("k0-%d", written)
				written++
				waitRevision(t, c, fillKeys(t, s, "a", added))
				var got []string
				if err := res.Stream(func(kv storage.KeyValue) error { got = append(got, kv.Key); return nil }); err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, tc.want) || res.Revision < rev {
					t.Errorf("rv=%q: streamed %v at %d, want %v at least at %d", rv, got, res.Revision, tc.want, rev)
				}
				tc.want = append(tc.want, "configmaps/a/"+added)
				slices.Sort(tc.want)
			}
		})
	}
	stop := errors.New("stop")
	res, err := c.List(context.Background(), "configmaps/", storage.ListOptions{ResourceVersion: "0", Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Stream(func(storage.KeyValue) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("a stream whose reader failed returned %v", err)
	}
	paged, err := c.List(context.Background(), "configmaps/", storage.ListOptions{ResourceVersion: "0", Limit: 2, Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	if paged.Stream != nil || len(paged.Items) != 2 {
		t.Errorf("a paged list: stream %v, %d items", paged.Stream != nil, len(paged.Items))
	}
}

// compactedStore is a store that reports etcd compacted to rev, as etcd3.Store does once its compactor
// (or another server's) has compacted.
type compactedStore struct {
	storage.Store
	rev atomic.Int64
}

func (s *compactedStore) CompactedRevision() int64 { return s.rev.Load() }

// Within the window too, a token from before a compaction expires, as in kube (conformance: "API
// chunking should support continue listing from the last key if the original version has been
// compacted away"): the cache does not answer at a revision etcd no longer has.
func TestListContinueAfterCompaction(t *testing.T) {
	srv := storagetest.IsolatedEtcd(t)
	s := newEtcdStore(t, srv.ClientURLs())
	fillKeys(t, s, "ns", "a", "b", "c", "d")
	cs := &compactedStore{Store: s}
	c := startCacher(t, cs, "configmaps/", Config{})
	first, err := c.List(context.Background(), "configmaps/", storage.ListOptions{ResourceVersion: "0", Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	last := create(t, s, "configmaps/ns/e", object("ns", "e", "e"))
	waitRevision(t, c, last.ModRevision)
	if got, _ := pages(t, c, "configmaps/", storage.ListOptions{Continue: first.Continue, Limit: 2}); fmt.Sprint(got) != "[[configmaps/ns/c configmaps/ns/d]]" {
		t.Fatalf("before the compaction, the rest at the first page's revision: %v", got)
	}

	if err := compact(testContext(t), srv.ClientURLs(), last.ModRevision); err != nil {
		t.Fatal(err)
	}
	cs.rev.Store(last.ModRevision)
	_, err = c.List(context.Background(), "configmaps/", storage.ListOptions{Continue: first.Continue, Limit: 2})
	var se *storage.StorageError
	if !storage.IsExpired(err) || !errors.As(err, &se) || se.Continue == "" {
		t.Fatalf("continue from before a compaction: %v, want Expired with a continue token", err)
	}
	if got, _ := pages(t, c, "configmaps/", storage.ListOptions{Continue: se.Continue, Limit: 2}); fmt.Sprint(got) != "[[configmaps/ns/c configmaps/ns/d] [configmaps/ns/e]]" {
		t.Errorf("the rest from the Expired token: %v", got)
	}
	// The token goes on at etcd's latest revision, which a change elsewhere has moved past this
	// resource's last change.
	elsewhere := create(t, s, "secrets/ns/x", object("ns", "x", "x"))
	res, err := c.List(context.Background(), "configmaps/", storage.ListOptions{Continue: se.Continue, Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if res.Revision < elsewhere.ModRevision {
		t.Errorf("the page from the Expired token is at revision %d, want etcd's latest, %d", res.Revision, elsewhere.ModRevision)
	}
}
