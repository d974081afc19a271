package etcd3

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"go.etcd.io/etcd/api/v3/mvccpb"

	"github.com/apictl/apictl/pkg/storage"
	"github.com/apictl/apictl/pkg/storage/encryption"
	"github.com/apictl/apictl/pkg/storage/internal/storagetest"
)

// TestListChunksLocalIsStream: read from the member in process, a resource of several pages yields
// exactly what the stream through gRPC yields (keys, decrypted values, revisions), with or without
// encryption at rest.
func TestListChunksLocalIsStream(t *testing.T) {
	srv := storagetest.IsolatedEtcd(t)
	for _, encrypted := range []bool{false, true} {
		t.Run(fmt.Sprintf("encrypted=%v", encrypted), func(t *testing.T) {
			cfg := Config{Prefix: uniquePrefix(t)}
			if encrypted {
				cfg.Transformers = encryption.NewTransformers(encryptionConfig(t, "key1"), servedForTest)
			}
			remote := newStore(t, srv.ClientURLs(), cfg)
			cfg.LocalRange = srv
			local := newStore(t, srv.ClientURLs(), cfg)
			n := 2*localChunkSize + 123
			for i := range n {
				if _, err := remote.Create(testContext(t), fmt.Sprintf("widgets/ns%d/w%05d", i%3, i), []byte(fmt.Sprint("value ", i)), 0); err != nil {
					t.Fatal(err)
				}
			}
			fill(t, remote, "", "widgetsx/a/b", "other/a/b")
			for _, prefix := range []string{"widgets/", "widgets/ns1/", "none/"} {
				want, _, wantRev := chunksOf(t, remote, prefix)
				got, chunks, gotRev := chunksOf(t, local, prefix)
				if gotRev != wantRev {
					t.Errorf("%s: revision %d, the stream read %d", prefix, gotRev, wantRev)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s: %d items differ from the stream's %d", prefix, len(got), len(want))
				}
				if prefix == "widgets/" && chunks != 3 {
					t.Errorf("%s: %d chunks, want 3", prefix, chunks)
				}
			}
		})
	}
}

// compactAfterFirst compacts etcd up to the revision its first page was read at, so the second page
// finds it compacted.
type compactAfterFirst struct {
	LocalRanger
	compact func(rev int64)
	pages   int
}

func (c *compactAfterFirst) RangeLocal(ctx context.Context, key, end []byte, rev, limit int64) ([]*mvccpb.KeyValue, int64, error) {
	kvs, got, err := c.LocalRanger.RangeLocal(ctx, key, end, rev, limit)
	if c.pages++; c.pages == 1 {
		c.compact(got)
	}
	return kvs, got, err
}

// TestListChunksLocalCompacted: a revision compacted between pages fails the read as Expired, as
// the stream's compacted error does, and the caller (the cache) lists again.
func TestListChunksLocalCompacted(t *testing.T) {
	srv := storagetest.IsolatedEtcd(t)
	raw := rawClient(t, srv.ClientURLs())
	ranger := &compactAfterFirst{LocalRanger: srv}
	s := newStore(t, srv.ClientURLs(), Config{LocalRange: ranger})
	for i := range localChunkSize + 1 {
		if _, err := s.Create(testContext(t), fmt.Sprintf("widgets/w%05d", i), []byte("v"), 0); err != nil {
			t.Fatal(err)
		}
	}
	ranger.compact = func(int64) {
		// A write after the read, then a compaction past the revision read.
		fill(t, s, "", "other/a/b")
		resp, err := raw.Get(testContext(t), "x")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := raw.Compact(testContext(t), resp.Header.Revision); err != nil {
			t.Fatal(err)
		}
	}
	_, err := s.ListChunks(testContext(t), "widgets/", func([]storage.KeyValue) error { return nil })
	if !storage.IsExpired(err) {
		t.Fatalf("ListChunks across a compaction: %v, want Expired", err)
	}
}
