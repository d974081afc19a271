package etcd3

import (
	"errors"
	"testing"

	"github.com/apictl/apictl/pkg/storage"
)

// An update may start from a cached value (a watch cache's). A current one is trusted without a
// read; a stale one costs a failed compare-and-swap and then behaves as a read would.
func TestGuaranteedUpdateFromCache(t *testing.T) {
	ctx := testContext(t)
	s := newStore(t, nil, Config{})
	write := func(key, value string) storage.KeyValue {
		t.Helper()
		kv, err := s.GuaranteedUpdate(ctx, key, func(storage.KeyValue) ([]byte, error) { return []byte(value), nil }, storage.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return kv
	}
	appendX := func(cur storage.KeyValue) ([]byte, error) { return append([]byte(string(cur.Value)), 'x'), nil }
	newKey := func(name string) (string, storage.KeyValue) {
		t.Helper()
		kv, err := s.Create(ctx, "leases/ns/"+name, []byte("v1"), 0)
		if err != nil {
			t.Fatal(err)
		}
		return kv.Key, kv
	}

	t.Run("a current cached value is used without a read", func(t *testing.T) {
		key, kv := newKey("current")
		// A value etcd never held at that revision shows whether it was read: etcd's is v1.
		cached := storage.KeyValue{Key: key, Value: []byte("cached"), ModRevision: kv.ModRevision}
		got, err := s.GuaranteedUpdate(ctx, key, appendX, storage.UpdateOptions{Cached: &cached})
		if err != nil || string(got.Value) != "cachedx" {
			t.Errorf("got %q, %v; want the cached value updated", got.Value, err)
		}
	})
	t.Run("a stale cached value loses the compare-and-swap and the update applies to the current one", func(t *testing.T) {
		key, stale := newKey("stale")
		write(key, "v2")
		var seen []string
		got, err := s.GuaranteedUpdate(ctx, key, func(cur storage.KeyValue) ([]byte, error) {
			seen = append(seen, string(cur.Value))
			return appendX(cur)
		}, storage.UpdateOptions{Cached: &stale})
		if err != nil || string(got.Value) != "v2x" || len(seen) != 2 || seen[1] != "v2" {
			t.Errorf("got %q, %v after seeing %q; want v2x", got.Value, err, seen)
		}
	})
	t.Run("an error for a stale value is asked again on the current one", func(t *testing.T) {
		key, stale := newKey("error")
		write(key, "ok")
		got, err := s.GuaranteedUpdate(ctx, key, func(cur storage.KeyValue) ([]byte, error) {
			if string(cur.Value) != "ok" {
				return nil, errors.New("precondition failed on " + string(cur.Value))
			}
			return appendX(cur)
		}, storage.UpdateOptions{Cached: &stale})
		if err != nil || string(got.Value) != "okx" {
			t.Errorf("got %q, %v; want okx", got.Value, err)
		}
	})
	t.Run("a no-op for a stale value is asked again on the current one", func(t *testing.T) {
		key, stale := newKey("noop")
		write(key, "changed")
		got, err := s.GuaranteedUpdate(ctx, key, func(cur storage.KeyValue) ([]byte, error) {
			if string(cur.Value) == "v1" {
				return cur.Value, nil
			}
			return appendX(cur)
		}, storage.UpdateOptions{Cached: &stale})
		if err != nil || string(got.Value) != "changedx" {
			t.Errorf("got %q, %v; want changedx", got.Value, err)
		}
	})
	t.Run("an expected revision the cache does not have is checked on a read", func(t *testing.T) {
		key, stale := newKey("expected")
		current := write(key, "v2")
		got, err := s.GuaranteedUpdate(ctx, key, appendX, storage.UpdateOptions{Cached: &stale, ExpectedRevision: current.ModRevision})
		if err != nil || string(got.Value) != "v2x" {
			t.Errorf("got %q, %v; want v2x", got.Value, err)
		}
		_, err = s.GuaranteedUpdate(ctx, key, appendX, storage.UpdateOptions{Cached: &current, ExpectedRevision: current.ModRevision})
		if !storage.IsConflict(err) {
			t.Errorf("an update expecting a revision etcd moved past: %v, want Conflict", err)
		}
	})
	t.Run("a key deleted since it was cached is not found", func(t *testing.T) {
		key, stale := newKey("deleted")
		if _, err := s.Delete(ctx, key, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := s.GuaranteedUpdate(ctx, key, appendX, storage.UpdateOptions{Cached: &stale}); !storage.IsNotFound(err) {
			t.Errorf("got %v, want NotFound", err)
		}
	})
}
