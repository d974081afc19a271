package cacher

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/apictl/apictl/pkg/storage"
)

// earlyProgressStore sends, once, a progress mark ahead of the next change of its watch, as etcd did
// under load at start: the mark claims a revision whose changes have not all arrived yet.
type earlyProgressStore struct {
	storage.Store
	sent atomic.Bool
}

func (s *earlyProgressStore) Watch(ctx context.Context, prefix string, opts storage.WatchOptions) (<-chan storage.Event, error) {
	in, err := s.Store.Watch(ctx, prefix, opts)
	if err != nil {
		return nil, err
	}
	out := make(chan storage.Event)
	go func() {
		defer close(out)
		for ev := range in {
			if ev.Type == storage.Added && s.sent.CompareAndSwap(false, true) {
				select {
				case out <- storage.Event{Type: storage.Progress, Revision: ev.Revision + 10}:
				case <-ctx.Done():
					return
				}
			}
			select {
			case out <- ev:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

// A change older than a progress mark the watch already gave makes the cache list again: it ends
// up holding the object, and a watch that followed the cache meanwhile ends with Expired (its client
// lists again), instead of both missing the object for good.
func TestChangeBehindProgressMarkRelists(t *testing.T) {
	ctx := testContext(t)
	s := newEtcdStore(t, nil)
	c := startCacher(t, &earlyProgressStore{Store: s}, "configmaps/", Config{})
	w := watch(t, c, "configmaps/", WatchOptions{ResourceVersion: "0"})
	kv := create(t, s, "configmaps/ns/a", object("ns", "a", "a1"))
	eventually(t, "the cache holds the object behind the early progress mark", func() bool {
		got, err := c.Get(ctx, "configmaps/ns/a", storage.GetOptions{ResourceVersion: "0"})
		return err == nil && got.ModRevision == kv.ModRevision
	})
	for ev := next(t, w); ; ev = next(t, w) {
		if ev.Type == storage.Error || (ev.Type == storage.Added && ev.KeyValue().Key == kv.Key) {
			break
		}
	}
}
