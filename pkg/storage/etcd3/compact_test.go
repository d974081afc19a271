package etcd3

import (
	"context"
	"strconv"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apictl/apictl/pkg/storage/internal/storagetest"
)

// Two servers on one cluster take turns: a round runs only for the server that saw the latest
// version of compact_rev_key, and compacts to the revision it saw one round earlier.
func TestCompactOnceTakesTurns(t *testing.T) {
	ctx := testContext(t)
	srv := storagetest.IsolatedEtcd(t)
	prefix := uniquePrefix(t)
	a := newStore(t, srv.ClientURLs(), Config{Prefix: prefix})
	b := newStore(t, srv.ClientURLs(), Config{Prefix: prefix})
	compacted := func(rev int64) bool {
		_, err := a.kv.Get(ctx, "k", clientv3.WithRev(rev))
		return isCompacted(err)
	}

	// Round 1: a claims it (version 0 → 1) but has no earlier revision, so nothing is compacted.
	va, ra, err := a.compactOnce(ctx, 0, 0)
	if err != nil || va != 1 {
		t.Fatalf("a's first round: version %d, %v", va, err)
	}
	// b, also at version 0, loses and learns version 1 and the current revision.
	vb, rb, err := b.compactOnce(ctx, 0, 0)
	if err != nil || vb != 1 || rb < ra {
		t.Fatalf("b's first round: version %d, revision %d (a saw %d), %v", vb, rb, ra, err)
	}
	for range 3 {
		fill(t, a, "pods/ns/", uniquePrefix(t))
	}
	// Round 2: b is up to date, so it claims the round and compacts to what it saw in round 1.
	vb2, _, err := b.compactOnce(ctx, vb, rb)
	if err != nil || vb2 != 2 {
		t.Fatalf("b's second round: version %d, %v", vb2, err)
	}
	if !compacted(rb - 1) {
		t.Errorf("revision %d is not compacted after b's round", rb-1)
	}
	if compacted(rb + 1) {
		t.Errorf("revision %d, newer than b's target, is compacted", rb+1)
	}
	// a, still at version 1, loses this time and compacts nothing.
	va2, _, err := a.compactOnce(ctx, va, ra)
	if err != nil || va2 != 2 {
		t.Fatalf("a's second round: version %d, %v", va2, err)
	}
	if compacted(rb + 1) {
		t.Error("a's lost round compacted")
	}
}

func TestCompactorRunsUntilClosed(t *testing.T) {
	ctx := testContext(t)
	srv := storagetest.IsolatedEtcd(t)
	s := newStore(t, srv.ClientURLs(), Config{CompactionInterval: 20 * time.Millisecond})
	first := fill(t, s, "pods/ns/", "a")
	fill(t, s, "pods/ns/", "b")
	s.StartCompactor(ctx)
	writes := 0
	eventually(t, 30*time.Second, "the compactor compacts", func() (bool, error) {
		writes++
		fill(t, s, "pods/ns/", "w"+strconv.Itoa(writes))
		_, err := s.kv.Get(ctx, "pods/ns/a", clientv3.WithRev(first))
		return isCompacted(err), nil
	})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s.StartCompactor(context.Background())
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.cancels) != 0 {
		t.Error("a closed store started a compactor")
	}
}

func TestCompactorDisabled(t *testing.T) {
	s := newStore(t, nil, Config{})
	s.mu.Lock()
	before := len(s.cancels) // the store's own loops
	s.mu.Unlock()
	s.StartCompactor(testContext(t))
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.cancels) != before {
		t.Error("a compactor started with interval 0")
	}
}
