package etcd3

import (
	"bytes"
	"context"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apiserver/pkg/storage/value"

	"github.com/apictl/apictl/pkg/storage"
)

// GuaranteedUpdate reads key (or starts from opts.Cached), asks tryUpdate for the next value and writes
// it with a transaction that requires the mod revision to be unchanged. When another writer got there first, the transaction's
// else branch returns the fresh value and tryUpdate runs again on it, without another read. With
// opts.ExpectedRevision set, a moved object is a Conflict instead. An unchanged value is not written
// (nor is its lease renewed), unless the transformer says it is stale: stored with a key that is no
// longer the first, which a rotation replaces by rewriting every object. opts.TTL > 0 attaches a
// lease; 0 keeps whatever lease the key has, so an update does not make an expiring key permanent.
func (s *Store) GuaranteedUpdate(ctx context.Context, key string, tryUpdate storage.UpdateFunc, opts storage.UpdateOptions) (storage.KeyValue, error) {
	if key == "" {
		return storage.KeyValue{}, invalid("update: the key is empty")
	}
	if err := s.haveQuorum(ctx); err != nil {
		return storage.KeyValue{}, err
	}
	t := s.codec.transformer(key)
	// fresh says current was read from etcd; a cached value only decides what to try first. stale
	// says current was not written with the first provider and key of its transformer: it is
	// rewritten even when unchanged, which is how a key rotation reaches every object.
	current, stale, fresh, err := s.updateStart(ctx, t, key, opts)
	if err != nil {
		return storage.KeyValue{}, err
	}
	for lost := 0; ; {
		if opts.ExpectedRevision != 0 && current.ModRevision != opts.ExpectedRevision {
			return storage.KeyValue{}, &storage.StorageError{Code: storage.Conflict, Op: "update", Key: key,
				ResourceVersion: opts.ExpectedRevision, CurrentRevision: current.ModRevision}
		}
		next, err := tryUpdate(current)
		if err != nil || (bytes.Equal(next, current.Value) && !stale) {
			if !fresh {
				// The verdict of a stale value counts for nothing: ask again on the current one.
				if current, stale, err = s.readState(ctx, t, "update", key); err != nil {
					return storage.KeyValue{}, err
				}
				fresh = true
				continue
			}
			if err != nil {
				return storage.KeyValue{}, err
			}
			return current, nil
		}
		if err := s.mayWrite(); err != nil {
			return storage.KeyValue{}, err
		}
		stored, err := s.codec.toStorage(ctx, t, key, next)
		if err != nil {
			return storage.KeyValue{}, err
		}
		putOpts, lease, err := s.leases.updateOptions(ctx, opts.TTL)
		if err != nil {
			return storage.KeyValue{}, s.interpret("update", key, fmt.Errorf("grant a lease: %w", err))
		}
		txn, err := s.kv.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(key), "=", current.ModRevision)).
			Then(clientv3.OpPut(key, string(stored), putOpts...)).
			Else(clientv3.OpGet(key)).
			Commit()
		if err != nil {
			if isLeaseGone(err) {
				// Someone revoked the shared lease; the next round grants a new one.
				s.leases.forget(lease)
				continue
			}
			if leaderLost(err) && lost < maxLeaderLossRetries {
				lost++
				kv, mine, err := s.afterLeaderLoss(ctx, "update", key, stored)
				switch {
				case err != nil:
					return storage.KeyValue{}, err
				case mine:
					return storage.KeyValue{Key: key, Value: next, ModRevision: kv.ModRevision}, nil
				case kv == nil:
					return storage.KeyValue{}, &storage.StorageError{Code: storage.NotFound, Op: "update", Key: key}
				}
				if current, stale, err = s.codec.decode(ctx, t, kv); err != nil {
					return storage.KeyValue{}, err
				}
				fresh = true
				continue
			}
			return storage.KeyValue{}, s.interpret("update", key, err)
		}
		if txn.Succeeded {
			return storage.KeyValue{Key: key, Value: next, ModRevision: txn.Header.Revision}, nil
		}
		if current, stale, err = s.fromElse(ctx, t, txn, "update", key); err != nil {
			return storage.KeyValue{}, err
		}
		fresh = true
	}
}

// updateStart is the value GuaranteedUpdate tries first: opts.Cached when it is key's and at the
// expected revision (not fresh), else what etcd holds (fresh).
func (s *Store) updateStart(ctx context.Context, t value.Transformer, key string, opts storage.UpdateOptions) (current storage.KeyValue, stale, fresh bool, err error) {
	if c := opts.Cached; c != nil && c.Key == key && (opts.ExpectedRevision == 0 || c.ModRevision == opts.ExpectedRevision) {
		return *c, false, false, nil
	}
	current, stale, err = s.readState(ctx, t, "update", key)
	return current, stale, true, err
}

// Delete removes key once check approves its current value, with a transaction that requires the mod
// revision to be unchanged; when another writer got there first, check runs again on the fresh value.
// The returned value is the deleted one, with ModRevision set to the delete's revision.
func (s *Store) Delete(ctx context.Context, key string, check storage.CheckFunc) (storage.KeyValue, error) {
	if key == "" {
		return storage.KeyValue{}, invalid("delete: the key is empty")
	}
	if err := s.haveQuorum(ctx); err != nil {
		return storage.KeyValue{}, err
	}
	t := s.codec.transformer(key)
	current, _, err := s.readState(ctx, t, "delete", key)
	if err != nil {
		return storage.KeyValue{}, err
	}
	for {
		if check != nil {
			if err := check(current); err != nil {
				return storage.KeyValue{}, err
			}
		}
		txn, err := s.kv.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(key), "=", current.ModRevision)).
			Then(clientv3.OpDelete(key)).
			Else(clientv3.OpGet(key)).
			Commit()
		if err != nil {
			return storage.KeyValue{}, s.interpret("delete", key, err)
		}
		if txn.Succeeded {
			current.ModRevision = txn.Header.Revision
			return current, nil
		}
		if current, _, err = s.fromElse(ctx, t, txn, "delete", key); err != nil {
			return storage.KeyValue{}, err
		}
	}
}

// readCurrent reads the latest value of key, for a compare-and-swap or a Get of resourceVersion "": a
// quorum read, NotFound if the key does not exist.
func (s *Store) readCurrent(ctx context.Context, op, key string) (storage.KeyValue, error) {
	kv, _, err := s.readState(ctx, s.codec.transformer(key), op, key)
	return kv, err
}

// readState is readCurrent through the key's transformer t, saying whether the value is stale.
func (s *Store) readState(ctx context.Context, t value.Transformer, op, key string) (storage.KeyValue, bool, error) {
	resp, err := s.kv.Get(ctx, key)
	if err != nil {
		return storage.KeyValue{}, false, s.interpret(op, key, err)
	}
	if len(resp.Kvs) == 0 {
		return storage.KeyValue{}, false, &storage.StorageError{Code: storage.NotFound, Op: op, Key: key}
	}
	return s.codec.decode(ctx, t, resp.Kvs[0])
}

// fromElse takes the fresh value from the else branch of a compare-and-swap that lost; NotFound if
// the winner deleted the key. stale is as readState's.
func (s *Store) fromElse(ctx context.Context, t value.Transformer, txn *clientv3.TxnResponse, op, key string) (storage.KeyValue, bool, error) {
	kvs := txn.Responses[0].GetResponseRange().Kvs
	if len(kvs) == 0 {
		return storage.KeyValue{}, false, &storage.StorageError{Code: storage.NotFound, Op: op, Key: key}
	}
	return s.codec.decode(ctx, t, kvs[0])
}
