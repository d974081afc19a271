package cacher

import (
	"testing"

	"github.com/apictl/apictl/pkg/storage"
)

// Reads without a resourceVersion must reflect every write completed before them. The cache answers
// them once it has reached etcd's revision, learning through a progress mark that writes to other
// resources changed nothing here.
func TestConsistentReads(t *testing.T) {
	ctx := testContext(t)
	s := newEtcdStore(t, nil)
	f := newFaultStore(s)
	c := startCacher(t, f, "configmaps/", Config{})

	// A write elsewhere moves etcd past the cache.
	other := create(t, s, "secrets/ns/x", object("ns", "x", "x"))
	if _, err := c.Get(ctx, "configmaps/ns/missing", storage.GetOptions{}); !storage.IsNotFound(err) {
		t.Fatalf("get of a missing key: %v, want NotFound", err)
	}
	if got := c.Stats().Revision; got < other.ModRevision {
		t.Errorf("the cache is at %d after a consistent read, want at least %d", got, other.ModRevision)
	}
	if f.progressRequests.Load() == 0 {
		t.Error("the cache reached a revision of another resource without asking for progress")
	}

	// A write here is seen by the next read, which the cache answers.
	for i, data := range []string{"a1", "a2", "a3"} {
		var kv storage.KeyValue
		if i == 0 {
			kv = create(t, s, "configmaps/ns/a", object("ns", "a", data))
		} else {
			kv = update(t, s, "configmaps/ns/a", object("ns", "a", data))
		}
		got, err := c.Get(ctx, "configmaps/ns/a", storage.GetOptions{})
		if err != nil || got.ModRevision != kv.ModRevision || string(got.Value) != string(kv.Value) {
			t.Fatalf("get after write %d: %+v %v, want revision %d", i, got, err, kv.ModRevision)
		}
		list, err := c.List(ctx, "configmaps/", storage.ListOptions{})
		if err != nil || list.Revision < kv.ModRevision || len(list.Items) != 1 || list.Items[0].ModRevision != kv.ModRevision {
			t.Fatalf("list after write %d: %+v %v, want the write at %d", i, list, err, kv.ModRevision)
		}
	}
	if n := f.gets.Load(); n != 0 {
		t.Errorf("%d consistent gets reached the store", n)
	}
}

// When the cache cannot catch up (its watch is stuck), the store answers: a consistent read is never
// stale, only slower.
func TestConsistentReadsFallBackToTheStore(t *testing.T) {
	ctx := testContext(t)
	s := newEtcdStore(t, nil)
	f := newFaultStore(s)
	c := startCacher(t, f, "configmaps/", Config{})
	first := create(t, s, "configmaps/ns/a", object("ns", "a", "a1"))
	waitRevision(t, c, first.ModRevision)
	f.pause(true) // events and progress marks are lost on the way
	kv := update(t, s, "configmaps/ns/a", object("ns", "a", "a2"))
	got, err := c.Get(ctx, "configmaps/ns/a", storage.GetOptions{})
	if err != nil || got.ModRevision != kv.ModRevision {
		t.Fatalf("get: %+v %v, want the write at %d", got, err, kv.ModRevision)
	}
	if f.gets.Load() == 0 {
		t.Error("the stale cache answered a consistent read")
	}
}

// A store that cannot report watch progress answers every consistent read itself.
func TestConsistentReadsWithoutProgress(t *testing.T) {
	ctx := testContext(t)
	f := newFaultStore(newEtcdStore(t, nil))
	c := startCacher(t, plainStore{f}, "configmaps/", Config{})
	kv := create(t, f, "configmaps/ns/a", object("ns", "a", "a1"))
	if got, err := c.Get(ctx, "configmaps/ns/a", storage.GetOptions{}); err != nil || got.ModRevision != kv.ModRevision {
		t.Fatalf("get: %+v %v", got, err)
	}
	lists := f.lists.Load()
	if _, err := c.List(ctx, "configmaps/", storage.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if f.gets.Load() != 1 || f.lists.Load() == lists {
		t.Errorf("consistent reads reached the store %d gets, %d lists; want every one", f.gets.Load(), f.lists.Load()-lists)
	}
}

// Updates start from the cached value, so that etcd is not read first.
func TestUpdatesStartFromTheCache(t *testing.T) {
	ctx := testContext(t)
	s := newEtcdStore(t, nil)
	f := newFaultStore(s)
	c := startCacher(t, f, "configmaps/", Config{})
	kv := create(t, s, "configmaps/ns/a", object("ns", "a", "a1"))
	waitRevision(t, c, kv.ModRevision)
	got, err := c.GuaranteedUpdate(ctx, "configmaps/ns/a", func(cur storage.KeyValue) ([]byte, error) {
		if cur.ModRevision != kv.ModRevision {
			t.Errorf("tryUpdate got revision %d, want %d", cur.ModRevision, kv.ModRevision)
		}
		return object("ns", "a", "a2"), nil
	}, storage.UpdateOptions{})
	if err != nil || got.ModRevision <= kv.ModRevision {
		t.Fatalf("update: %+v %v", got, err)
	}
	if f.cachedUpdates.Load() != 1 {
		t.Error("the update did not start from the cached value")
	}
	if _, err := c.GuaranteedUpdate(ctx, "configmaps/ns/missing", func(storage.KeyValue) ([]byte, error) { return []byte("{}"), nil },
		storage.UpdateOptions{}); !storage.IsNotFound(err) {
		t.Errorf("update of a missing key: %v, want NotFound", err)
	}
}
