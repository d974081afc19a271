package etcd3

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/apictl/apictl/pkg/storage"
)

func TestCreate(t *testing.T) {
	ctx := testContext(t)
	s := newStore(t, nil, Config{})
	kv, err := s.Create(ctx, "configmaps/default/a", []byte(`{"a":1}`), 0)
	if err != nil {
		t.Fatal(err)
	}
	if kv.Key != "configmaps/default/a" || string(kv.Value) != `{"a":1}` || kv.ModRevision == 0 {
		t.Errorf("Create returned %+v", kv)
	}
	got, err := s.Get(ctx, "configmaps/default/a", storage.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.ModRevision != kv.ModRevision || !bytes.Equal(got.Value, kv.Value) {
		t.Errorf("Get after Create = %+v, want %+v", got, kv)
	}

	_, err = s.Create(ctx, "configmaps/default/a", []byte(`{"a":2}`), 0)
	if !storage.IsAlreadyExists(err) {
		t.Fatalf("second Create: err = %v, want AlreadyExists", err)
	}
	if got, _ := s.Get(ctx, "configmaps/default/a", storage.GetOptions{}); string(got.Value) != `{"a":1}` {
		t.Errorf("a failed Create changed the value to %s", got.Value)
	}
	if _, err := s.Create(ctx, "", nil, 0); !storage.IsInvalid(err) {
		t.Errorf("Create of an empty key: err = %v, want Invalid", err)
	}
}

// The store's prefix is etcd's concern only: the caller's keys come back without it, and a store
// under another prefix sees nothing.
func TestPrefixIsolation(t *testing.T) {
	ctx := testContext(t)
	prefix := uniquePrefix(t)
	a := newStore(t, nil, Config{Prefix: prefix + "/a"})
	b := newStore(t, nil, Config{Prefix: prefix + "/b"})
	if _, err := a.Create(ctx, "configmaps/ns/x", []byte("1"), 0); err != nil {
		t.Fatal(err)
	}
	raw, err := rawClient(t, nil).Get(ctx, prefix+"/a/configmaps/ns/x")
	if err != nil || len(raw.Kvs) != 1 {
		t.Fatalf("raw read of the prefixed key: %v, %v", raw, err)
	}
	if _, err := b.Get(ctx, "configmaps/ns/x", storage.GetOptions{}); !storage.IsNotFound(err) {
		t.Errorf("a store under another prefix: err = %v, want NotFound", err)
	}
	list, err := b.List(ctx, "configmaps/", storage.ListOptions{})
	if err != nil || len(list.Items) != 0 {
		t.Errorf("a store under another prefix lists %v, %v", list, err)
	}
}

func TestGetResourceVersions(t *testing.T) {
	ctx := testContext(t)
	s := newStore(t, nil, Config{})
	kv, err := s.Create(ctx, "configmaps/ns/a", []byte("v1"), 0)
	if err != nil {
		t.Fatal(err)
	}
	current, err := s.CurrentRevision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if current < kv.ModRevision {
		t.Fatalf("CurrentRevision %d is older than a write at %d", current, kv.ModRevision)
	}
	tests := []struct {
		rv   string
		code storage.ErrorCode
	}{
		{rv: ""},
		{rv: "0"},
		{rv: strconv.FormatInt(kv.ModRevision, 10)},
		{rv: "1"},
		{rv: strconv.FormatInt(current+1000, 10), code: storage.TooLargeResourceVersion},
		{rv: "abc", code: storage.Invalid},
		{rv: "-3", code: storage.Invalid},
	}
	for _, tt := range tests {
		t.Run("rv="+tt.rv, func(t *testing.T) {
			got, err := s.Get(ctx, "configmaps/ns/a", storage.GetOptions{ResourceVersion: tt.rv})
			if code := storage.CodeOf(err); code != tt.code {
				t.Fatalf("err = %v (code %s), want code %s", err, code, tt.code)
			}
			if tt.code == storage.TooLargeResourceVersion {
				checkTooLarge(t, err, current+1000, current)
				return
			}
			if err == nil && (string(got.Value) != "v1" || got.ModRevision != kv.ModRevision) {
				t.Errorf("Get = %+v", got)
			}
		})
	}
	if _, err := s.Get(ctx, "configmaps/ns/missing", storage.GetOptions{}); !storage.IsNotFound(err) {
		t.Errorf("Get of a missing key: err = %v, want NotFound", err)
	}
}

func TestTwoStoresSeeEachOthersWrites(t *testing.T) {
	ctx := testContext(t)
	prefix := uniquePrefix(t)
	a := newStore(t, nil, Config{Prefix: prefix})
	b := newStore(t, nil, Config{Prefix: prefix})
	created, err := a.Create(ctx, "configmaps/ns/x", []byte("from a"), 0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := b.Get(ctx, "configmaps/ns/x", storage.GetOptions{})
	if err != nil || string(got.Value) != "from a" || got.ModRevision != created.ModRevision {
		t.Fatalf("b reads %+v, %v right after a's create", got, err)
	}
	updated, err := b.GuaranteedUpdate(ctx, "configmaps/ns/x", func(storage.KeyValue) ([]byte, error) { return []byte("from b"), nil },
		storage.UpdateOptions{ExpectedRevision: created.ModRevision})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.GuaranteedUpdate(ctx, "configmaps/ns/x", func(storage.KeyValue) ([]byte, error) { return []byte("stale a"), nil },
		storage.UpdateOptions{ExpectedRevision: created.ModRevision}); !storage.IsConflict(err) {
		t.Errorf("a's update with the old resourceVersion: err = %v, want Conflict", err)
	}
	list, err := a.List(ctx, "configmaps/", storage.ListOptions{})
	if err != nil || len(list.Items) != 1 || string(list.Items[0].Value) != "from b" || list.Revision < updated.ModRevision {
		t.Errorf("a lists %+v, %v after b's update", list, err)
	}
}

func TestCanceledContext(t *testing.T) {
	s := newStore(t, nil, Config{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := s.Get(ctx, "k/ns/a", storage.GetOptions{})
	if !errors.Is(err, context.Canceled) || storage.IsUnavailable(err) {
		t.Errorf("Get with a canceled context: err = %v, want context.Canceled and not Unavailable", err)
	}
}

// etcd refuses requests above 1.5 MiB, and the client those above 2 MiB before sending them.
func TestCreateTooLarge(t *testing.T) {
	s := newStore(t, nil, Config{})
	for _, size := range []int{1600 << 10, 3 << 20} {
		_, err := s.Create(testContext(t), "configmaps/ns/big", bytes.Repeat([]byte("x"), size), 0)
		if !storage.IsRequestTooLarge(err) {
			t.Errorf("Create of %d bytes: err = %v, want RequestTooLarge", size, err)
		}
	}
}
