package etcd3

import (
	"bytes"
	"context"
	"errors"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
)

// maxLeaderLossRetries bounds how often one write is tried again after its cluster's leader was lost
// under it.
const maxLeaderLossRetries = 3

// leaderLost reports whether a write failed because the leader it was proposed to failed or changed:
// it may or may not have been committed. A member of an embedded cluster sees this for the writes in
// flight when another member, the leader, is killed.
func leaderLost(err error) bool {
	var e rpctypes.EtcdError
	if !errors.As(err, &e) {
		return false
	}
	// ErrTimeout too: a proposal forwarded to a leader that died before it appended it times out,
	// and etcd does not always tell that apart from a slow commit.
	return e == rpctypes.ErrTimeoutDueToLeaderFail || e == rpctypes.ErrLeaderChanged ||
		e == rpctypes.ErrTimeoutDueToConnectionLost || e == rpctypes.ErrTimeout
}

// afterLeaderLoss waits for a leader (the quorum gate) and reads key, to settle a write whose outcome
// a lost leader left unknown: mine is true when key holds exactly the bytes that write stored, which
// no other write can have produced (every stored object carries its own uid, resourceVersion history
// and, when encrypted, its own nonce). kv is nil when key does not exist.
func (s *Store) afterLeaderLoss(ctx context.Context, op, key string, stored []byte) (kv *mvccpb.KeyValue, mine bool, err error) {
	if err := s.haveQuorum(ctx); err != nil {
		return nil, false, err
	}
	resp, err := s.kv.Get(ctx, key)
	if err != nil {
		return nil, false, s.interpret(op, key, err)
	}
	if len(resp.Kvs) == 0 {
		return nil, false, nil
	}
	return resp.Kvs[0], bytes.Equal(resp.Kvs[0].Value, stored), nil
}
