package etcd3

import (
	"testing"
	"time"

	"github.com/apictl/apictl/pkg/storage"
)

func TestTTLExpires(t *testing.T) {
	ctx := testContext(t)
	s := newStore(t, nil, Config{})
	if _, err := s.Create(ctx, "events/ns/short", []byte("e"), time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, "events/ns/long", []byte("e"), time.Hour); err != nil {
		t.Fatal(err)
	}
	// An update without a TTL keeps the key's lease.
	if _, err := s.GuaranteedUpdate(ctx, "events/ns/short", func(storage.KeyValue) ([]byte, error) { return []byte("e2"), nil },
		storage.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 15*time.Second, "the key with a 1s TTL expires", func() (bool, error) {
		_, err := s.Get(ctx, "events/ns/short", storage.GetOptions{})
		if storage.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	if _, err := s.Get(ctx, "events/ns/long", storage.GetOptions{}); err != nil {
		t.Errorf("the key with a 1h TTL: %v", err)
	}
}

// Keys written close together with similar long TTLs share a lease; short TTLs, whose margin rounds
// to nothing, do not.
func TestLeaseReuse(t *testing.T) {
	ctx := testContext(t)
	s := newStore(t, nil, Config{})
	a, err := s.leases.get(ctx, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.leases.get(ctx, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Errorf("two 1h leases in a row: %x and %x, want one shared", a, b)
	}
	c, err := s.leases.get(ctx, 2*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if c == a {
		t.Error("a 2h TTL reused a lease that expires in 1h")
	}
	d, _ := s.leases.get(ctx, 5*time.Second)
	e, _ := s.leases.get(ctx, 5*time.Second)
	if d == e {
		t.Error("5s TTLs shared a lease although their margin is 0")
	}
}
