package etcd3

import (
	"context"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apictl/apictl/pkg/storage"
)

// LocalRanger reads keys straight from the MVCC store of an etcd member in this process
// (embedded.Server does). A store given one fills watch caches through it rather than through
// gRPC, TLS and protobuf on loopback, which cost more CPU than etcd's own read.
type LocalRanger interface {
	// RangeLocal reads up to limit keys of [key, end) at revision rev, 0 for the latest after a
	// linearizable read barrier, and returns them, full keys, with the revision read. A compacted
	// rev fails with rpctypes.ErrCompacted.
	RangeLocal(ctx context.Context, key, end []byte, rev, limit int64) ([]*mvccpb.KeyValue, int64, error)
}

// localChunkSize is how many keys a local page reads: enough that opening a read transaction per
// page costs nothing, few enough that a page (some MiB) is small beside the cache it fills.
const localChunkSize = 5000

// listChunksLocal is ListChunks through s.localRange: pages of localChunkSize keys, all at the
// revision of the first, each in its own read transaction so that a long fill does not hold one open.
//
// In an HA cluster the member answering is this process's, not the leader; the first page waits for
// a linearizable read barrier, so it is as current as the gRPC path's quorum read. A cache filled
// from the result watches from its revision, so nothing written after it is missed.
//
// A revision compacted between pages fails the read like the stream's compacted error, and a read
// that fails before any chunk is handed falls back to the stream, as if there were no local member.
func (s *Store) listChunksLocal(ctx context.Context, prefix string, each func([]storage.KeyValue) error) (int64, error) {
	full := s.prefix + prefix
	key, end := []byte(full), []byte(clientv3.GetPrefixRangeEnd(full))
	t := s.codec.transformer(prefix)
	var dc *keyContext
	var revision int64
	for {
		kvs, rev, err := s.localRange.RangeLocal(ctx, key, end, revision, localChunkSize)
		if err != nil {
			if ctx.Err() != nil {
				return 0, s.interpret("list", prefix, ctx.Err())
			}
			if revision == 0 {
				s.logger.Warn("reading from the embedded etcd failed; reading through its client instead", "prefix", prefix, "err", err)
				return s.listChunksStream(ctx, prefix, each)
			}
			return 0, s.listError(ctx, prefix, listPlan{start: prefix}, 0, err)
		}
		if revision == 0 {
			revision = rev
		}
		if len(kvs) == 0 {
			return revision, nil
		}
		// The next page starts just past the last key read.
		key = append(append([]byte(nil), kvs[len(kvs)-1].Key...), 0)
		items, err := s.chunkItems(ctx, t, kvs, &dc)
		if err != nil {
			return 0, err
		}
		if err := each(items); err != nil {
			return 0, err
		}
		if len(kvs) < localChunkSize {
			return revision, nil
		}
	}
}
