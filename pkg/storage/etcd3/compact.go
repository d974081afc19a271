package etcd3

import (
	"context"
	"strconv"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// StartCompactor compacts etcd every CompactionInterval until ctx ends or the store closes; it does
// nothing when the interval is 0.
//
// Each round compacts to the revision seen one interval earlier, so a list or watch gets at least
// one interval to use its revision. Several apictl servers on one cluster take turns through a
// compare-and-swap on compact_rev_key (under the prefix): a round runs only if the key's version is
// the one this server saw last time, that is if no other server compacted since. The loser learns the
// current version and the current revision, and the next round is its turn unless someone is faster.
func (s *Store) StartCompactor(ctx context.Context) {
	if s.compactionInterval <= 0 {
		return
	}
	_ = s.goBackground(ctx, s.compactLoop)
}

func (s *Store) compactLoop(ctx context.Context) {
	ticker := time.NewTicker(s.compactionInterval)
	defer ticker.Stop()
	var version, revision int64
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		var err error
		version, revision, err = s.compactOnce(ctx, version, revision)
		if err != nil && ctx.Err() == nil {
			s.logger.Warn("etcd compaction failed; trying again next interval", "endpoints", s.endpoints, "err", err)
		}
	}
}

// compactOnce is one round: it claims the round if compact_rev_key still has version, and then
// compacts to revision (the one seen a round ago; 0 means none yet). It returns the version and the
// revision to use next round.
func (s *Store) compactOnce(ctx context.Context, version, revision int64) (int64, int64, error) {
	resp, err := s.kv.Txn(ctx).
		If(clientv3.Compare(clientv3.Version(compactRevKey), "=", version)).
		Then(clientv3.OpPut(compactRevKey, strconv.FormatInt(revision, 10))).
		Else(clientv3.OpGet(compactRevKey)).
		Commit()
	if err != nil {
		return version, revision, s.interpret("compact", compactRevKey, err)
	}
	current := resp.Header.Revision
	if !resp.Succeeded {
		var seen int64
		if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 {
			seen = kvs[0].Version
			// Another server won the round: its key holds the revision it compacted to.
			if rev, err := strconv.ParseInt(string(kvs[0].Value), 10, 64); err == nil {
				s.noteCompacted(rev)
			}
		}
		return seen, current, nil
	}
	if revision == 0 {
		return version + 1, current, nil
	}
	if _, err := s.kv.Compact(ctx, revision); err != nil && !isCompacted(err) {
		return version + 1, current, s.interpret("compact", compactRevKey, err)
	}
	s.noteCompacted(revision)
	s.logger.Debug("etcd compacted", "revision", revision, "endpoints", s.endpoints)
	return version + 1, current, nil
}

// noteCompacted records that etcd holds nothing before revision.
func (s *Store) noteCompacted(revision int64) {
	for {
		old := s.compacted.Load()
		if revision <= old || s.compacted.CompareAndSwap(old, revision) {
			return
		}
	}
}

// CompactedRevision is the revision etcd was last compacted to, as far as the compactors of this
// server have seen (their own rounds, and the other servers' they lose): 0 before any. The watch cache
// asks it so that a continue token from before a compaction expires as kube's does, rather than
// being answered from memory for as long as the cache's window holds its revision.
func (s *Store) CompactedRevision() int64 { return s.compacted.Load() }
