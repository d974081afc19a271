package etcd3

import (
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/apictl/apictl/pkg/storage"
)

func TestGuaranteedUpdate(t *testing.T) {
	ctx := testContext(t)
	s := newStore(t, nil, Config{})
	created, err := s.Create(ctx, "leases/ns/a", []byte("1"), 0)
	if err != nil {
		t.Fatal(err)
	}
	updated, err := s.GuaranteedUpdate(ctx, "leases/ns/a", func(cur storage.KeyValue) ([]byte, error) {
		if cur.ModRevision != created.ModRevision || string(cur.Value) != "1" {
			t.Errorf("tryUpdate got %+v", cur)
		}
		return []byte("2"), nil
	}, storage.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if string(updated.Value) != "2" || updated.ModRevision <= created.ModRevision {
		t.Errorf("update returned %+v", updated)
	}
	got, _ := s.Get(ctx, "leases/ns/a", storage.GetOptions{})
	if got.ModRevision != updated.ModRevision || string(got.Value) != "2" {
		t.Errorf("Get after update = %+v, want %+v", got, updated)
	}

	t.Run("unchanged bytes are not written", func(t *testing.T) {
		same, err := s.GuaranteedUpdate(ctx, "leases/ns/a", func(cur storage.KeyValue) ([]byte, error) {
			return append([]byte(nil), cur.Value...), nil
		}, storage.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if same.ModRevision != updated.ModRevision {
			t.Errorf("a no-op update wrote revision %d", same.ModRevision)
		}
	})
	t.Run("missing key", func(t *testing.T) {
		_, err := s.GuaranteedUpdate(ctx, "leases/ns/missing", func(storage.KeyValue) ([]byte, error) {
			t.Error("tryUpdate called for a missing key")
			return nil, nil
		}, storage.UpdateOptions{})
		if !storage.IsNotFound(err) {
			t.Errorf("err = %v, want NotFound", err)
		}
	})
	t.Run("tryUpdate's error passes through unchanged", func(t *testing.T) {
		sentinel := errors.New("the handler's own status")
		_, err := s.GuaranteedUpdate(ctx, "leases/ns/a", func(storage.KeyValue) ([]byte, error) { return nil, sentinel }, storage.UpdateOptions{})
		if err != sentinel {
			t.Errorf("err = %v, want the sentinel itself", err)
		}
	})
	t.Run("stale expected revision is a conflict", func(t *testing.T) {
		_, err := s.GuaranteedUpdate(ctx, "leases/ns/a", func(storage.KeyValue) ([]byte, error) {
			t.Error("tryUpdate called despite a stale resourceVersion")
			return []byte("3"), nil
		}, storage.UpdateOptions{ExpectedRevision: created.ModRevision})
		var se *storage.StorageError
		if !errors.As(err, &se) || se.Code != storage.Conflict {
			t.Fatalf("err = %v, want Conflict", err)
		}
		if se.ResourceVersion != created.ModRevision || se.CurrentRevision != updated.ModRevision {
			t.Errorf("Conflict carries rv %d, current %d; want %d, %d", se.ResourceVersion, se.CurrentRevision, created.ModRevision, updated.ModRevision)
		}
	})
	t.Run("current expected revision succeeds", func(t *testing.T) {
		_, err := s.GuaranteedUpdate(ctx, "leases/ns/a", func(storage.KeyValue) ([]byte, error) { return []byte("3"), nil },
			storage.UpdateOptions{ExpectedRevision: updated.ModRevision})
		if err != nil {
			t.Error(err)
		}
	})
}

// A write that lands between the read and the compare-and-swap makes the store call tryUpdate again
// with the value from the transaction's else branch.
func TestGuaranteedUpdateRetriesWithFreshValue(t *testing.T) {
	ctx := testContext(t)
	s := newStore(t, nil, Config{})
	if _, err := s.Create(ctx, "k/ns/a", []byte("0"), 0); err != nil {
		t.Fatal(err)
	}
	var seen []string
	_, err := s.GuaranteedUpdate(ctx, "k/ns/a", func(cur storage.KeyValue) ([]byte, error) {
		seen = append(seen, string(cur.Value))
		if len(seen) == 1 {
			// Another writer wins the race.
			if _, err := s.kv.Put(ctx, "k/ns/a", "interloper"); err != nil {
				return nil, err
			}
		}
		return []byte(string(cur.Value) + "+mine"), nil
	}, storage.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || seen[0] != "0" || seen[1] != "interloper" {
		t.Errorf("tryUpdate saw %q, want [0 interloper]", seen)
	}
	got, _ := s.Get(ctx, "k/ns/a", storage.GetOptions{})
	if string(got.Value) != "interloper+mine" {
		t.Errorf("final value %q", got.Value)
	}
}

// With a client's resourceVersion, a lost race is a conflict rather than a retry.
func TestGuaranteedUpdateExpectedRevisionLosesRace(t *testing.T) {
	ctx := testContext(t)
	s := newStore(t, nil, Config{})
	created, err := s.Create(ctx, "k/ns/a", []byte("0"), 0)
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	_, err = s.GuaranteedUpdate(ctx, "k/ns/a", func(cur storage.KeyValue) ([]byte, error) {
		calls++
		if _, err := s.kv.Put(ctx, "k/ns/a", "interloper"); err != nil {
			return nil, err
		}
		return []byte("mine"), nil
	}, storage.UpdateOptions{ExpectedRevision: created.ModRevision})
	if !storage.IsConflict(err) || calls != 1 {
		t.Errorf("err = %v after %d calls, want Conflict after 1", err, calls)
	}
}

func TestGuaranteedUpdateConcurrentIncrements(t *testing.T) {
	ctx := testContext(t)
	s := newStore(t, nil, Config{})
	if _, err := s.Create(ctx, "counters/ns/c", []byte("0"), 0); err != nil {
		t.Fatal(err)
	}
	const goroutines, increments = 16, 50
	var tries atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range increments {
				_, err := s.GuaranteedUpdate(ctx, "counters/ns/c", func(cur storage.KeyValue) ([]byte, error) {
					tries.Add(1)
					n, err := strconv.Atoi(string(cur.Value))
					if err != nil {
						return nil, err
					}
					return []byte(strconv.Itoa(n + 1)), nil
				}, storage.UpdateOptions{})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, "counters/ns/c", storage.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Value) != strconv.Itoa(goroutines*increments) {
		t.Errorf("counter = %s, want %d", got.Value, goroutines*increments)
	}
	t.Logf("%d tryUpdate calls for %d increments", tries.Load(), goroutines*increments)
}

func TestDelete(t *testing.T) {
	ctx := testContext(t)
	s := newStore(t, nil, Config{})
	created, err := s.Create(ctx, "secrets/ns/a", []byte("v"), 0)
	if err != nil {
		t.Fatal(err)
	}

	sentinel := errors.New("precondition failed: uid")
	_, err = s.Delete(ctx, "secrets/ns/a", func(cur storage.KeyValue) error {
		if cur.ModRevision != created.ModRevision {
			t.Errorf("check got %+v", cur)
		}
		return sentinel
	})
	if err != sentinel {
		t.Fatalf("a failing check: err = %v, want the sentinel itself", err)
	}
	if _, err := s.Get(ctx, "secrets/ns/a", storage.GetOptions{}); err != nil {
		t.Fatalf("the key is gone although check refused: %v", err)
	}

	deleted, err := s.Delete(ctx, "secrets/ns/a", func(storage.KeyValue) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	current, _ := s.CurrentRevision(ctx)
	if string(deleted.Value) != "v" || deleted.ModRevision <= created.ModRevision || deleted.ModRevision != current {
		t.Errorf("Delete returned %+v; want the old value at the delete's revision %d", deleted, current)
	}
	if _, err := s.Get(ctx, "secrets/ns/a", storage.GetOptions{}); !storage.IsNotFound(err) {
		t.Errorf("Get after Delete: err = %v, want NotFound", err)
	}
	if _, err := s.Delete(ctx, "secrets/ns/a", nil); !storage.IsNotFound(err) {
		t.Errorf("second Delete: err = %v, want NotFound", err)
	}
}

// A write between the read and the delete's compare-and-swap makes check run again on the fresh value.
func TestDeleteRetriesWithFreshValue(t *testing.T) {
	ctx := testContext(t)
	s := newStore(t, nil, Config{})
	if _, err := s.Create(ctx, "k/ns/a", []byte("0"), 0); err != nil {
		t.Fatal(err)
	}
	var seen []string
	deleted, err := s.Delete(ctx, "k/ns/a", func(cur storage.KeyValue) error {
		seen = append(seen, string(cur.Value))
		if len(seen) == 1 {
			_, err := s.kv.Put(ctx, "k/ns/a", "interloper")
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || seen[1] != "interloper" || string(deleted.Value) != "interloper" {
		t.Errorf("check saw %q, deleted %q", seen, deleted.Value)
	}
}
