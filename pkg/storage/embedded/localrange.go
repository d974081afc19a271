package embedded

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"go.etcd.io/etcd/pkg/v3/traceutil"
	"go.etcd.io/etcd/server/v3/storage/mvcc"
)

// RangeLocal reads up to limit keys of [key, end) at revision rev straight from this member's MVCC
// store, without gRPC, TLS or protobuf between them: a watch cache filling in the same process spends
// most of its time there otherwise. rev 0 reads at the latest revision after a linearizable read
// barrier, so the first page is as current as a quorum read; later pages pass the revision it
// returned, so that every page sees the same revision. A compacted rev fails with
// rpctypes.ErrCompacted, the error a client gets from etcd for it.
//
// The keys are full etcd keys, and the values are copies that stay valid after the call.
func (s *Server) RangeLocal(ctx context.Context, key, end []byte, rev, limit int64) ([]*mvccpb.KeyValue, int64, error) {
	srv := s.etcd.Server
	if rev == 0 {
		// Without the barrier a member could read what it has applied so far, behind its cluster's
		// leader. After it, the read is at least as new as any write acknowledged before the call.
		if err := srv.LinearizableReadNotify(ctx); err != nil {
			return nil, 0, fmt.Errorf("waiting for a linearizable read of the embedded etcd: %w", err)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	// ConcurrentReadTxMode copies the write buffer and then reads without blocking writers for the
	// length of the page.
	txn := srv.KV().Read(mvcc.ConcurrentReadTxMode, traceutil.TODO())
	defer txn.End()
	res, err := txn.Range(ctx, key, end, mvcc.RangeOptions{Limit: limit, Rev: rev})
	switch {
	case errors.Is(err, mvcc.ErrCompacted):
		return nil, 0, rpctypes.ErrCompacted
	case errors.Is(err, mvcc.ErrFutureRev):
		return nil, 0, rpctypes.ErrFutureRev
	case err != nil:
		return nil, 0, fmt.Errorf("reading %q from the embedded etcd: %w", key, err)
	}
	return res.KVs, res.Rev, nil
}
