package etcd3

import (
	"context"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apictl/apictl/pkg/storage"
)

// Create writes value at key in a transaction that requires the key not to exist. A positive ttl
// attaches a (possibly shared) lease, so the key expires after ttl and at most the lease-reuse margin.
func (s *Store) Create(ctx context.Context, key string, value []byte, ttl time.Duration) (storage.KeyValue, error) {
	if key == "" {
		return storage.KeyValue{}, invalid("create: the key is empty")
	}
	if err := s.haveQuorum(ctx); err != nil {
		return storage.KeyValue{}, err
	}
	if err := s.mayWrite(); err != nil {
		return storage.KeyValue{}, err
	}
	stored, err := s.codec.toStorage(ctx, s.codec.transformer(key), key, value)
	if err != nil {
		return storage.KeyValue{}, err
	}
	retriedLease := false
	for lost := 0; ; {
		var opts []clientv3.OpOption
		lease := clientv3.NoLease
		if ttl > 0 {
			var err error
			if lease, err = s.leases.get(ctx, ttl); err != nil {
				return storage.KeyValue{}, s.interpret("create", key, fmt.Errorf("grant a lease: %w", err))
			}
			opts = append(opts, clientv3.WithLease(lease))
		}
		resp, err := s.kv.Txn(ctx).
			If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
			Then(clientv3.OpPut(key, string(stored), opts...)).
			Commit()
		if err != nil {
			if isLeaseGone(err) && !retriedLease {
				retriedLease = true
				s.leases.forget(lease)
				continue
			}
			if leaderLost(err) && lost < maxLeaderLossRetries {
				lost++
				kv, mine, err := s.afterLeaderLoss(ctx, "create", key, stored)
				switch {
				case err != nil:
					return storage.KeyValue{}, err
				case mine:
					return storage.KeyValue{Key: key, Value: value, ModRevision: kv.ModRevision}, nil
				case kv == nil:
					continue
				}
				return storage.KeyValue{}, &storage.StorageError{Code: storage.AlreadyExists, Op: "create", Key: key}
			}
			return storage.KeyValue{}, s.interpret("create", key, err)
		}
		if !resp.Succeeded {
			return storage.KeyValue{}, &storage.StorageError{Code: storage.AlreadyExists, Op: "create", Key: key}
		}
		return storage.KeyValue{Key: key, Value: value, ModRevision: resp.Header.Revision}, nil
	}
}

// Get reads key. ResourceVersion "" reads the latest value (quorum read), "0" whatever the member
// has (serializable), "N" a value not older than N.
func (s *Store) Get(ctx context.Context, key string, opts storage.GetOptions) (storage.KeyValue, error) {
	if key == "" {
		return storage.KeyValue{}, invalid("get: the key is empty")
	}
	var resp *clientv3.GetResponse
	var err error
	switch opts.ResourceVersion {
	case "":
		return s.readCurrent(ctx, "get", key)
	case "0":
		resp, err = s.kv.Get(ctx, key, clientv3.WithSerializable())
	default:
		var minRev int64
		if minRev, err = storage.ParseResourceVersion(opts.ResourceVersion); err != nil {
			return storage.KeyValue{}, err
		}
		resp, err = s.getNotOlderThan(ctx, "get", key, minRev)
	}
	if err != nil {
		return storage.KeyValue{}, s.interpret("get", key, err)
	}
	if len(resp.Kvs) == 0 {
		return storage.KeyValue{}, &storage.StorageError{Code: storage.NotFound, Op: "get", Key: key}
	}
	kv, _, err := s.codec.decode(ctx, s.codec.transformer(key), resp.Kvs[0])
	return kv, err
}

// getNotOlderThan reads with opts at a revision of at least minRev. A serializable read answers from
// the member's own state without a round to the leader; only when that member lags behind minRev does
// a quorum read follow. If even the quorum has not reached minRev, the error is
// TooLargeResourceVersion. Errors other than that one are the client's, uninterpreted.
func (s *Store) getNotOlderThan(ctx context.Context, op, key string, minRev int64, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	resp, err := s.kv.Get(ctx, key, append(opts[:len(opts):len(opts)], clientv3.WithSerializable())...)
	if err != nil || resp.Header.Revision >= minRev {
		return resp, err
	}
	if resp, err = s.kv.Get(ctx, key, opts...); err != nil || resp.Header.Revision >= minRev {
		return resp, err
	}
	return nil, &storage.StorageError{Code: storage.TooLargeResourceVersion, Op: op, Key: key,
		ResourceVersion: minRev, CurrentRevision: resp.Header.Revision}
}

func keyValue(kv *mvccpb.KeyValue) storage.KeyValue {
	return storage.KeyValue{Key: string(kv.Key), Value: kv.Value, ModRevision: kv.ModRevision}
}
