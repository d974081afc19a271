package etcd3

import (
	"context"
	"errors"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/apiserver/pkg/storage/value"

	"github.com/apictl/apictl/pkg/storage"
)

var _ storage.ChunkLister = (*Store)(nil)

// ListChunks implements storage.ChunkLister with etcd's RangeStream (etcd 3.7 and later): etcd reads
// the range in chunks of about its request size limit at one revision, without counting what is left
// at every chunk, and sends each as it is read. A unary range of the same keys is read whole, encoded
// whole, sent, and only then decoded: the stages run one after the other, and the response is one
// buffer the size of the resource. Streamed, they overlap, and at start, when the watch caches fill,
// that is most of the time to ready. An etcd without RangeStream gets one ordinary list.
func (s *Store) ListChunks(ctx context.Context, prefix string, each func([]storage.KeyValue) error) (int64, error) {
	prefix, err := rangePrefix("list", prefix)
	if err != nil {
		return 0, err
	}
	if s.localRange != nil {
		return s.listChunksLocal(ctx, prefix, each)
	}
	return s.listChunksStream(ctx, prefix, each)
}

// listChunksStream is ListChunks through etcd's RangeStream.
func (s *Store) listChunksStream(ctx context.Context, prefix string, each func([]storage.KeyValue) error) (int64, error) {
	// The namespace wrapper of s.kv has no RangeStream: the client's own KV gets the full keys.
	full := s.prefix + prefix
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := s.client.KV.GetStream(sctx, full, clientv3.WithRange(clientv3.GetPrefixRangeEnd(full)))
	if err != nil {
		return s.listChunksFailed(ctx, prefix, each, false, err)
	}
	// stop ends the stream early and waits for the client's goroutine that feeds it.
	stop := func() {
		cancel()
		for range stream {
		}
	}
	t := s.codec.transformer(prefix)
	var dc *keyContext
	var revision int64
	handed := false
	for chunk := range stream {
		if err := chunk.Err(); err != nil {
			stop()
			return s.listChunksFailed(ctx, prefix, each, handed, err)
		}
		if chunk.Header != nil {
			// Only the last chunk has a header.
			revision = chunk.Header.Revision
		}
		items, err := s.chunkItems(ctx, t, chunk.Kvs, &dc)
		if err != nil {
			stop()
			return 0, err
		}
		handed = true
		if err := each(items); err != nil {
			stop()
			return 0, err
		}
	}
	if revision == 0 {
		// The stream ended without its last chunk: the context ended.
		err := ctx.Err()
		if err == nil {
			err = errors.New("etcd ended the range stream before its last chunk")
		}
		return 0, s.interpret("list", prefix, err)
	}
	return revision, nil
}

// listChunksFailed answers a ListChunks whose stream failed with err: with one ordinary list when
// etcd does not know RangeStream (an etcd older than 3.7; it says so before any chunk is handed),
// else with err as a list's error.
func (s *Store) listChunksFailed(ctx context.Context, prefix string, each func([]storage.KeyValue) error, handed bool, err error) (int64, error) {
	if handed || status.Code(err) != codes.Unimplemented {
		return 0, s.listError(ctx, prefix, listPlan{start: prefix}, 0, err)
	}
	res, err := s.List(ctx, prefix, storage.ListOptions{})
	if err != nil {
		return 0, err
	}
	if err := each(res.Items); err != nil {
		return 0, err
	}
	return res.Revision, nil
}

// chunkItems turns a chunk of etcd's key-values (full keys) into the caller's: keys without the
// store's prefix, values through t. *dc is the keyContext the chunks of one list share, made when a
// value first needs one.
func (s *Store) chunkItems(ctx context.Context, t value.Transformer, kvs []*mvccpb.KeyValue, dc **keyContext) ([]storage.KeyValue, error) {
	items := make([]storage.KeyValue, len(kvs))
	for i, kv := range kvs {
		kv.Key = kv.Key[len(s.prefix):]
		if !needsDecode(t, kv.Value) {
			items[i] = keyValue(kv)
			continue
		}
		if *dc == nil {
			*dc = &keyContext{prefix: s.prefix}
		}
		var err error
		if items[i], err = s.codec.decodeListItem(ctx, t, kv, *dc); err != nil {
			return nil, err
		}
	}
	return items, nil
}
