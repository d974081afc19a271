package etcd3

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/storage/value"

	"github.com/apictl/apictl/pkg/storage"
	"github.com/apictl/apictl/pkg/storage/encryption"
)

// encryptionConfig loads an EncryptionConfiguration whose secrets use aescbc with the named keys, in
// order (the first writes), each key's secret 32 bytes of its name's first letter.
func encryptionConfig(t *testing.T, keyNames ...string) *encryption.Config {
	t.Helper()
	var keys []string
	for _, name := range keyNames {
		secret := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{name[0]}, 32))
		keys = append(keys, "{name: "+name+", secret: "+secret+"}")
	}
	content := "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n" +
		"- resources: [secrets]\n  providers:\n  - aescbc: {keys: [" + strings.Join(keys, ", ") + "]}\n"
	path := filepath.Join(t.TempDir(), "encryption.yaml")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := encryption.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

var servedForTest = []schema.GroupResource{{Resource: "secrets"}, {Resource: "configmaps"}}

// rawValue reads what etcd holds at the store's key.
func rawValue(t *testing.T, s *Store, key string) ([]byte, int64) {
	t.Helper()
	resp, err := rawClient(t, nil).Get(testContext(t), s.prefix+key)
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("raw get %q: %v (%d keys)", s.prefix+key, err, len(resp.Kvs))
	}
	return resp.Kvs[0].Value, resp.Kvs[0].ModRevision
}

func TestEncryptedAtRest(t *testing.T) {
	ts := encryption.NewTransformers(encryptionConfig(t, "key1"), servedForTest)
	s := newStore(t, nil, Config{Transformers: ts})
	ctx := testContext(t)
	events, err := s.Watch(ctx, "secrets/", storage.WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	secret, cm := []byte(`{"kind":"Secret","data":{"k":"dg=="}}`), []byte(`{"kind":"ConfigMap"}`)
	created, err := s.Create(ctx, "secrets/default/a", secret, 0)
	if err != nil || !bytes.Equal(created.Value, secret) {
		t.Fatalf("create returned %q, %v; want the plaintext", created.Value, err)
	}
	if _, err := s.Create(ctx, "configmaps/default/a", cm, 0); err != nil {
		t.Fatal(err)
	}
	if raw, _ := rawValue(t, s, "secrets/default/a"); !bytes.HasPrefix(raw, []byte("k8s:enc:aescbc:v1:key1:")) || bytes.Contains(raw, []byte("dg==")) {
		t.Errorf("etcd holds %q for the secret, want it encrypted with key1", raw)
	}
	if raw, _ := rawValue(t, s, "configmaps/default/a"); !bytes.Equal(raw, cm) {
		t.Errorf("etcd holds %q for the configmap, want the plaintext: it is not in the configuration", raw)
	}
	for _, rv := range []string{"", "0", "1"} {
		got, err := s.Get(ctx, "secrets/default/a", storage.GetOptions{ResourceVersion: rv})
		if err != nil || !bytes.Equal(got.Value, secret) {
			t.Errorf("get (rv %q) = %q, %v", rv, got.Value, err)
		}
	}
	filterSaw := ""
	list, err := s.List(ctx, "secrets/", storage.ListOptions{Limit: 1, Filter: func(kv storage.KeyValue) (bool, error) {
		filterSaw = string(kv.Value)
		return true, nil
	}})
	if err != nil || len(list.Items) != 1 || !bytes.Equal(list.Items[0].Value, secret) || filterSaw != string(secret) {
		t.Fatalf("list = %+v, %v; its filter saw %q", list, err, filterSaw)
	}
	updated, err := s.GuaranteedUpdate(ctx, "secrets/default/a", func(cur storage.KeyValue) ([]byte, error) {
		return bytes.Replace(cur.Value, []byte("dg=="), []byte("dw=="), 1), nil
	}, storage.UpdateOptions{})
	if err != nil || !bytes.Contains(updated.Value, []byte("dw==")) {
		t.Fatalf("update = %q, %v", updated.Value, err)
	}
	deleted, err := s.Delete(ctx, "secrets/default/a", func(cur storage.KeyValue) error {
		if !bytes.Contains(cur.Value, []byte("dw==")) {
			t.Errorf("delete's check saw %q, want the plaintext", cur.Value)
		}
		return nil
	})
	if err != nil || !bytes.Contains(deleted.Value, []byte("dw==")) {
		t.Fatalf("delete = %q, %v", deleted.Value, err)
	}
	want := []struct {
		typ   storage.EventType
		value string
	}{{storage.Added, "dg=="}, {storage.Modified, "dw=="}, {storage.Deleted, "dw=="}}
	for _, w := range want {
		select {
		case ev := <-events:
			if ev.Type != w.typ || !bytes.Contains(ev.Object.Value, []byte(w.value)) {
				t.Errorf("watch sent %s %q (%v), want %s with %s", ev.Type, ev.Object.Value, ev.Err, w.typ, w.value)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no %s event", w.typ)
		}
	}
}

// TestStaleValueIsRewritten is key rotation: after the new key goes first, an update that changes
// nothing still rewrites a value stored with the old key, once.
func TestStaleValueIsRewritten(t *testing.T) {
	ts := encryption.NewTransformers(encryptionConfig(t, "old"), servedForTest)
	s := newStore(t, nil, Config{Transformers: ts})
	ctx := testContext(t)
	secret := []byte(`{"kind":"Secret"}`)
	for _, name := range []string{"a", "b"} {
		if _, err := s.Create(ctx, "secrets/default/"+name, secret, 0); err != nil {
			t.Fatal(err)
		}
	}
	unchanged := func(cur storage.KeyValue) ([]byte, error) { return cur.Value, nil }
	_, before := rawValue(t, s, "secrets/default/a")
	if _, err := s.GuaranteedUpdate(ctx, "secrets/default/a", unchanged, storage.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, rev := rawValue(t, s, "secrets/default/a"); rev != before {
		t.Fatalf("an unchanged, current value was written (revision %d -> %d)", before, rev)
	}

	ts.SetConfig(encryptionConfig(t, "new", "old"))
	cached, err := s.Get(ctx, "secrets/default/b", storage.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for name, opts := range map[string]storage.UpdateOptions{"a": {}, "b": {Cached: &cached}} {
		key := "secrets/default/" + name
		got, err := s.GuaranteedUpdate(ctx, key, unchanged, opts)
		if err != nil || !bytes.Equal(got.Value, secret) {
			t.Fatalf("update of %s = %q, %v", key, got.Value, err)
		}
		raw, rev := rawValue(t, s, key)
		if !bytes.HasPrefix(raw, []byte("k8s:enc:aescbc:v1:new:")) || got.ModRevision != rev {
			t.Errorf("after an update, %s holds %q at revision %d (update said %d); want it rewritten with the new key", key, raw[:30], rev, got.ModRevision)
		}
		if _, err := s.GuaranteedUpdate(ctx, key, unchanged, storage.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, again := rawValue(t, s, key); again != rev {
			t.Errorf("%s was written again once current (revision %d -> %d)", key, rev, again)
		}
	}
}

// TestUndecryptableValues: a value the configuration cannot read is kube's internal error, for a
// get, a list and a watch alike.
func TestUndecryptableValues(t *testing.T) {
	writer := newStore(t, nil, Config{Transformers: encryption.NewTransformers(encryptionConfig(t, "key1"), servedForTest)})
	ctx := testContext(t)
	created, err := writer.Create(ctx, "secrets/default/a", []byte(`{}`), 0)
	if err != nil {
		t.Fatal(err)
	}
	plain := newStore(t, nil, Config{Prefix: writer.prefix, Transformers: encryption.NewTransformers(encryptionConfig(t, "key2"), servedForTest)})
	_, err = plain.Get(ctx, "secrets/default/a", storage.GetOptions{})
	if err == nil || err.Error() != "no matching key was found for the provided AES transformer" {
		t.Errorf("get with another key: %v; want kube's message", err)
	}
	_, err = plain.List(ctx, "secrets/", storage.ListOptions{})
	if want := `unable to transform key "` + writer.prefix + `secrets/default/a": no matching key was found for the provided AES transformer`; err == nil || err.Error() != want {
		t.Errorf("list with another key: %v; want %s", err, want)
	}
	// Without any configuration, as kube with no --encryption-provider-config.
	none := newStore(t, nil, Config{Prefix: writer.prefix})
	if _, err := none.Get(ctx, "secrets/default/a", storage.GetOptions{}); err == nil || err.Error() != "identity transformer tried to read encrypted data" {
		t.Errorf("get without a configuration: %v; want kube's identity message", err)
	}
	if _, err := none.List(ctx, "secrets/", storage.ListOptions{}); err == nil || !strings.HasSuffix(err.Error(), "identity transformer tried to read encrypted data") {
		t.Errorf("list without a configuration: %v; want kube's identity message", err)
	}
	events, err := plain.Watch(ctx, "secrets/", storage.WatchOptions{Revision: created.ModRevision - 1})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-events:
		if ev.Type != storage.Error || ev.Err == nil || !strings.Contains(ev.Err.Error(), "no matching key") {
			t.Errorf("watch sent %s %v, want an error event", ev.Type, ev.Err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event")
	}
}

// TestAuthenticatedDataIsTheFullKey: aesgcm binds a value to its key as kube does, to the full etcd
// key with the prefix, so a value copied to another key does not read.
func TestAuthenticatedDataIsTheFullKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "encryption.yaml")
	content := "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: [secrets]\n" +
		"  providers: [{aesgcm: {keys: [{name: k, secret: " + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{9}, 16)) + "}]}}]\n"
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := encryption.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	s := newStore(t, nil, Config{Transformers: encryption.NewTransformers(cfg, servedForTest)})
	ctx := testContext(t)
	if _, err := s.Create(ctx, "secrets/default/a", []byte(`{"a":1}`), 0); err != nil {
		t.Fatal(err)
	}
	raw, _ := rawValue(t, s, "secrets/default/a")
	secrets := cfg.For(schema.GroupResource{Resource: "secrets"})
	if plain, _, err := secrets.TransformFromStorage(ctx, raw, value.DefaultContext(s.prefix+"secrets/default/a")); err != nil || string(plain) != `{"a":1}` {
		t.Errorf("reading with the full key as authenticated data: %q, %v", plain, err)
	}
	if _, err := rawClient(t, nil).Put(ctx, s.prefix+"secrets/default/b", string(raw)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "secrets/default/b", storage.GetOptions{}); err == nil {
		t.Error("a value copied to another key read back; want an error")
	}
	if got, err := s.Get(ctx, "secrets/default/a", storage.GetOptions{}); err != nil || string(got.Value) != `{"a":1}` {
		t.Errorf("get = %q, %v", got.Value, err)
	}
}

// TestNoConfigurationCostsNothing: without --encryption-provider-config the read path allocates
// exactly what it did before encryption existed (the key string of keyValue), and the list's per-item
// check allocates nothing.
func TestNoConfigurationCostsNothing(t *testing.T) {
	s := &Store{prefix: "/registry/", codec: codec{prefix: "/registry/"}}
	kv := &mvccpb.KeyValue{Key: []byte("secrets/default/a"), Value: []byte(`{"kind":"Secret"}`), ModRevision: 3}
	ctx := context.Background()
	check := testing.AllocsPerRun(1000, func() {
		if needsDecode(s.codec.transformer("secrets/"), kv.Value) {
			t.Fatal("a plain value needs decoding without a configuration")
		}
	})
	var sink storage.KeyValue
	plain := testing.AllocsPerRun(1000, func() { sink = keyValue(kv) })
	decoded := testing.AllocsPerRun(1000, func() {
		var err error
		if sink, _, err = s.codec.decode(ctx, s.codec.transformer("secrets/default/a"), kv); err != nil {
			t.Fatal(err)
		}
	})
	_ = sink
	if check != 0 || decoded != plain {
		t.Errorf("allocations without a configuration: %v for the list's check (want 0), %v for a read (want %v, as keyValue)", check, decoded, plain)
	}
}
