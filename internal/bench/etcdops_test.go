package bench

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/apictl/apictl/pkg/storage/embedded"
)

// testEtcd runs an etcd in this process for the test (no fsync: correctness, not speed, is tested).
func testEtcd(t *testing.T) *clientv3.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := embedded.Start(ctx, embedded.Config{Dir: filepath.Join(t.TempDir(), "etcd"), UnsafeNoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close(context.Background()) })
	cli, err := clientv3.New(clientv3.Config{Endpoints: srv.ClientURLs(), DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

func TestServerKeys(t *testing.T) {
	if got, want := serverKey("bench-list", "list-00000"), "/registry/configmaps/bench-list/list-00000"; got != want {
		t.Errorf("key %q, want %q", got, want)
	}
	if got, want := serverPrefix("bench-list"), "/registry/configmaps/bench-list/"; got != want {
		t.Errorf("prefix %q, want %q", got, want)
	}
}

func TestClearWrites(t *testing.T) {
	cli := testEtcd(t)
	ctx := context.Background()
	keep := []string{serverKey(listNamespace, "list-00000"), serverKey(writeNamespace+"x", "a"), etcdScratch + "create/a"}
	for _, k := range append([]string{serverKey(writeNamespace, "a"), serverKey(writeNamespace, "b")}, keep...) {
		if _, err := cli.Put(ctx, k, "{}"); err != nil {
			t.Fatal(err)
		}
	}
	if err := clearWrites(ctx, cli); err != nil {
		t.Fatal(err)
	}
	resp, err := cli.Get(ctx, "/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, kv := range resp.Kvs {
		left = append(left, string(kv.Key))
	}
	slices.Sort(keep)
	if !slices.Equal(left, keep) {
		t.Errorf("left %q, want %q", left, keep)
	}
}

func TestEtcdWorkers(t *testing.T) {
	cli := testEtcd(t)
	ctx := context.Background()
	for i := range 3 {
		if _, err := cli.Put(ctx, serverKey(listNamespace, listName(i)), "{}"); err != nil {
			t.Fatal(err)
		}
	}
	// A key of the next namespace must not be in the range.
	if _, err := cli.Put(ctx, serverKey(listNamespace+"x", "a"), "{}"); err != nil {
		t.Fatal(err)
	}
	e := etcdTarget{cli: cli, value: `{"kind":"ConfigMap"}`, listed: 3}
	ops := etcdWorkers(e, "c8")
	run := func(o Operation, w int, times int) error {
		t.Helper()
		do, err := ops[o](ctx, w)
		if err != nil {
			t.Fatal(err)
		}
		for range times {
			if err := do(ctx); err != nil {
				return err
			}
		}
		return nil
	}
	for _, o := range []Operation{OpEtcdGet, OpEtcdRange, OpEtcdCreate, OpEtcdCAS} {
		if err := run(o, 1, 3); err != nil {
			t.Errorf("%s: %v", o, err)
		}
	}
	created, err := cli.Get(ctx, etcdScratch+"create/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	if len(created.Kvs) != 3 || string(created.Kvs[0].Value) != e.value {
		t.Errorf("created %v, want 3 keys holding the server's value", created.Kvs)
	}

	t.Run("range counts", func(t *testing.T) {
		e := e
		e.listed = 4
		do, _ := etcdWorkers(e, "c8")[OpEtcdRange](ctx, 0)
		if err := do(ctx); err == nil || !strings.Contains(err.Error(), "3 keys, want 4") {
			t.Errorf("error %v, want a count mismatch", err)
		}
	})
	t.Run("create refuses an existing key", func(t *testing.T) {
		// A second measurement with the same label would write the same keys.
		if err := run(OpEtcdCreate, 1, 1); err == nil || !strings.Contains(err.Error(), "the key exists") {
			t.Errorf("error %v, want the key to exist", err)
		}
	})
	t.Run("CAS fails when someone else wrote", func(t *testing.T) {
		do, err := ops[OpEtcdCAS](ctx, 5)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cli.Put(ctx, etcdScratch+"update/5", "x"); err != nil {
			t.Fatal(err)
		}
		if err := do(ctx); err == nil || !strings.Contains(err.Error(), "the key changed") {
			t.Errorf("error %v, want a failed compare", err)
		}
	})
	t.Run("get of a missing key", func(t *testing.T) {
		if _, err := cli.Delete(ctx, serverKey(listNamespace, getName)); err != nil {
			t.Fatal(err)
		}
		if err := run(OpEtcdGet, 0, 1); err == nil || !strings.Contains(err.Error(), "0 keys, want 1") {
			t.Errorf("error %v, want a missing key", err)
		}
	})
}
