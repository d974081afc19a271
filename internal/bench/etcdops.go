package bench

import (
	"context"
	"fmt"
	"strconv"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apictl/apictl/pkg/storage"
)

// etcdScratch is where the harness's own etcd writes go: outside the server's prefix, so that the
// server never sees them.
const etcdScratch = "/apictl-bench/"

// serverKey is the etcd key of a ConfigMap the server stores.
func serverKey(namespace, name string) string {
	return etcdPrefix + "/" + storage.ObjectKey("", "configmaps", namespace, name)
}

// serverPrefix is the etcd prefix of a namespace's ConfigMaps on the server.
func serverPrefix(namespace string) string {
	return etcdPrefix + "/" + storage.ResourcePrefix("", "configmaps", namespace)
}

// etcdTarget does the server's work directly on etcd: the same keys for reads, the same value size
// for writes.
type etcdTarget struct {
	cli *clientv3.Client
	// value is a stored ConfigMap as the server wrote it, so that etcd's writes carry the same bytes.
	value string
	// listed is how many keys the range must return.
	listed int
}

// etcdWorkers returns, for each etcd operation, how a worker of the measurement labelled label
// prepares.
func etcdWorkers(e etcdTarget, label string) map[Operation]newWorker {
	getKey := serverKey(listNamespace, getName)
	rangePrefix := serverPrefix(listNamespace)
	return map[Operation]newWorker{
		OpEtcdGet: func(context.Context, int) (op, error) {
			return func(ctx context.Context) error {
				resp, err := e.cli.Get(ctx, getKey)
				if err != nil {
					return err
				}
				if len(resp.Kvs) != 1 {
					return fmt.Errorf("get %s: %d keys, want 1", getKey, len(resp.Kvs))
				}
				return nil
			}, nil
		},
		OpEtcdRange: func(context.Context, int) (op, error) {
			return func(ctx context.Context) error {
				resp, err := e.cli.Get(ctx, rangePrefix, clientv3.WithPrefix())
				if err != nil {
					return err
				}
				if len(resp.Kvs) != e.listed {
					return fmt.Errorf("range %s: %d keys, want %d", rangePrefix, len(resp.Kvs), e.listed)
				}
				return nil
			}, nil
		},
		OpEtcdCreate: func(_ context.Context, w int) (op, error) {
			prefix := etcdScratch + "create/" + label + "-w" + strconv.Itoa(w) + "-"
			n := 0
			return func(ctx context.Context) error {
				n++
				key := prefix + strconv.Itoa(n)
				resp, err := e.cli.Txn(ctx).
					If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
					Then(clientv3.OpPut(key, e.value)).
					Commit()
				if err != nil {
					return err
				}
				if !resp.Succeeded {
					return fmt.Errorf("create %s: the key exists", key)
				}
				return nil
			}, nil
		},
		OpEtcdCAS: func(ctx context.Context, w int) (op, error) {
			key := etcdScratch + "update/" + strconv.Itoa(w)
			put, err := e.cli.Put(ctx, key, e.value)
			if err != nil {
				return nil, fmt.Errorf("put %s: %w", key, err)
			}
			rev := put.Header.Revision
			return func(ctx context.Context) error {
				resp, err := e.cli.Txn(ctx).
					If(clientv3.Compare(clientv3.ModRevision(key), "=", rev)).
					Then(clientv3.OpPut(key, e.value)).
					Commit()
				if err != nil {
					return err
				}
				if !resp.Succeeded {
					return fmt.Errorf("compare-and-swap %s at revision %d: the key changed", key, rev)
				}
				rev = resp.Header.Revision
				return nil
			}, nil
		},
	}
}
