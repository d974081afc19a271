package cacher

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/apictl/apictl/pkg/storage"
)

// maxBatch bounds how many events of the underlying watch are applied under one lock and announced
// with one wake-up.
const maxBatch = 256

// The pause before the cacher lists or watches again after a failure grows from minRetry to maxRetry.
const (
	minRetry = 100 * time.Millisecond
	maxRetry = 5 * time.Second
)

// errWatchEnded says the underlying watch closed its channel without an Error event.
var errWatchEnded = errors.New("the store ended the watch")

// errBehindProgress is an event older than a progress mark the watch already gave: the mark claimed
// every change up to it had been delivered. etcd broadcasts progress marks to every watch on its
// stream, and under load one reached the watch cache ahead of a catch-up event (seen at start, when
// many caches open their watches at once: the cache then lacked objects for good, and the RBAC
// index with it). Only a list can tell what the cache missed, so the cacher lists again; the list's
// gap ends the watches the missed changes concern, with Expired, and their clients list again too.
var errBehindProgress = errors.New("the store sent a change older than its progress mark")

// Run fills the cache with a list of the prefix and keeps it current with one watch of the store
// until ctx ends; then every watch of the cacher ends, and Run returns nil once their goroutines have.
//
// When the underlying watch fails, Run watches again from the cache's revision, so that no watcher
// notices; only when the store no longer has that revision (compacted) does it list again. Changes
// the re-list finds are a gap in the history: watchers whose selection they concern get an Expired
// error event, the others go on. Run returns an error only when the cacher has already run.
func (c *Cacher) Run(ctx context.Context) error {
	if !c.running.CompareAndSwap(false, true) {
		return fmt.Errorf("run the watch cache of %q: it has already run", c.prefix)
	}
	defer c.shutdown()
	reflector{c: c}.run(ctx)
	return nil
}

// reflector keeps a Cacher current with its store, as kube's reflector feeds its watch cache: it
// lists the prefix, follows one watch of it, applies the events in batches under the cacher's lock,
// and watches or lists again when the watch ends. It is the only writer of the cacher's index,
// window and revision; the Cacher's own methods read them.
type reflector struct {
	c *Cacher
}

// run lists and watches until ctx ends.
func (r reflector) run(ctx context.Context) {
	c := r.c
	pause := minRetry
	wait := func() {
		timer := time.NewTimer(pause)
		defer timer.Stop()
		select {
		case <-ctx.Done():
		case <-timer.C:
		}
		pause = min(2*pause, maxRetry)
	}
	mustList := true
	for ctx.Err() == nil {
		if mustList {
			if err := r.relist(ctx); err != nil {
				if ctx.Err() == nil {
					c.logger.Warn("listing the resource for the watch cache failed; trying again", "err", err, "in", pause)
					wait()
				}
				continue
			}
			mustList = false
		}
		progressed, err := r.follow(ctx)
		if ctx.Err() != nil {
			break
		}
		if progressed {
			pause = minRetry
		}
		switch {
		case storage.IsExpired(err):
			c.logger.Info("the store no longer has the watch cache's revision; listing again", "revision", c.revision(), "err", err)
			mustList = true
			if !progressed {
				wait()
			}
		case storage.IsUnavailable(err), storage.IsTooSlow(err), errors.Is(err, errWatchEnded):
			c.logger.Info("the watch cache's watch ended; watching again from its revision", "revision", c.revision(), "err", err, "in", pause)
			wait()
			// etcd restored from an older backup is behind the cache: only a list can tell what it holds.
			if r.behind(ctx) {
				mustList = true
			}
		default:
			c.logger.Warn("the watch cache's watch failed; listing again", "revision", c.revision(), "err", err, "in", pause)
			wait()
			mustList = true
		}
	}
}

// behind reports whether etcd's revision is behind the cache's. A failure to tell is not: the watch
// that follows will fail again if etcd is still away.
func (r reflector) behind(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, maxRetry)
	defer cancel()
	current, err := r.c.store.CurrentRevision(ctx)
	return err == nil && current < r.c.revision()
}

// shutdown ends every watcher and waits for their goroutines.
func (c *Cacher) shutdown() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	close(c.stopped)
	c.watchers.Wait()
}

func (c *Cacher) revision() int64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.rev
}

// relist reads the whole prefix and makes it the cache's state.
func (r reflector) relist(ctx context.Context) error {
	items, rev, err := r.listAll(ctx)
	if err != nil {
		return fmt.Errorf("list %q: %w", r.c.prefix, err)
	}
	r.replace(items, rev)
	return nil
}

// listAll reads the whole prefix at the store's latest revision, in chunks when the store can stream
// them (the cache fills while etcd still reads, which is most of a server's start with many objects
// stored), else with one list.
func (r reflector) listAll(ctx context.Context) ([]storage.KeyValue, int64, error) {
	chunked, ok := r.c.store.(storage.ChunkLister)
	if !ok {
		res, err := r.c.store.List(ctx, r.c.prefix, storage.ListOptions{})
		if err != nil {
			return nil, 0, err
		}
		return res.Items, res.Revision, nil
	}
	var items []storage.KeyValue
	rev, err := chunked.ListChunks(ctx, r.c.prefix, func(chunk []storage.KeyValue) error {
		if items == nil {
			items = chunk
		} else {
			items = append(items, chunk...)
		}
		return nil
	})
	return items, rev, err
}

// follow runs one watch of the store from the cache's revision and applies its events until it
// fails or ctx ends. It reports whether any event arrived, and the error that ended the watch.
func (r reflector) follow(ctx context.Context) (bool, error) {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events, err := r.c.store.Watch(wctx, r.c.prefix, storage.WatchOptions{Revision: r.c.revision(), ProgressNotify: r.c.progress != nil})
	if err != nil {
		return false, err
	}
	ticker := time.NewTicker(r.c.cfg.BookmarkInterval)
	defer ticker.Stop()
	batch := make([]storage.Event, 0, maxBatch)
	progressed := false
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return progressed, errWatchEnded
			}
			batch = append(batch[:0], ev)
			// Take what else is waiting, so that a burst costs one lock and one wake-up per batch.
		drain:
			for len(batch) < maxBatch && ev.Type != storage.Error {
				select {
				case next, ok := <-events:
					if !ok {
						break drain
					}
					ev = next
					batch = append(batch, ev)
				default:
					break drain
				}
			}
			applied, err := r.apply(batch)
			clear(batch)
			progressed = progressed || applied > 0
			if err != nil {
				return progressed, err
			}
		case <-ticker.C:
			r.tick()
		case <-ctx.Done():
			return progressed, ctx.Err()
		}
	}
}

// apply applies a batch of the store's events up to the first Error event, whose error it returns,
// and wakes the watchers once. It returns how many events changed the cache.
func (r reflector) apply(batch []storage.Event) (int, error) {
	var failed error
	applied := 0
	r.c.update(func() bool {
		for _, ev := range batch {
			if ev.Type == storage.Error {
				failed = ev.Err
				if failed == nil {
					failed = errWatchEnded
				}
				break
			}
			if ev.Type == storage.Progress {
				// Nothing changed here up to the mark: the cache is current to it.
				r.c.rev = max(r.c.rev, ev.Revision)
				continue
			}
			if ev.Revision < r.c.rev {
				failed = fmt.Errorf("%w: %s at revision %d, progress mark %d", errBehindProgress, ev.Object.Key, ev.Revision, r.c.rev)
				break
			}
			ch := r.applyOne(ev)
			if ch == nil {
				continue
			}
			r.c.window.push(ch)
			r.c.rev = ev.Revision
			applied++
		}
		return applied > 0
	})
	return applied, failed
}

// applyOne applies one event to the index and returns the change it makes; nil for an event the
// cache already has or does not understand. The caller holds mu for writing.
func (r reflector) applyOne(ev storage.Event) *change {
	if ev.Revision < r.c.rev {
		return nil
	}
	key := ev.Object.Key
	switch ev.Type {
	case storage.Added, storage.Modified:
		kv := ev.Object
		kv.ModRevision = ev.Revision
		v := newVersion(kv)
		return newChange(ev.Revision, key, v, r.c.index.put(v))
	case storage.Deleted:
		prev := r.c.index.delete(key)
		if prev == nil {
			// Not in the cache (it cannot happen while the watch follows the list): the event's last
			// state still tells the watchers what went.
			prev = newVersion(ev.Object)
		}
		return newChange(ev.Revision, key, nil, prev)
	}
	return nil
}

// tick makes a periodic bookmark due for every watcher.
func (r reflector) tick() {
	r.c.update(func() bool {
		r.c.bookmarks++
		return true
	})
}

// replace makes a list at rev the cache's state. The first list starts the cache; a later one is
// compared with the cache, and what changed meanwhile goes into the window as one gap.
func (r reflector) replace(items []storage.KeyValue, rev int64) {
	r.c.update(func() bool {
		switch {
		case !r.c.isReady():
			r.c.index.build(newVersions(items))
			r.c.rev = rev
			r.c.window.oldest = rev
			close(r.c.ready)
			r.c.logger.Debug("watch cache ready", "revision", rev, "objects", len(items))
			return false
		case rev < r.c.rev:
			r.c.index.build(newVersions(items))
			r.c.window.push(&change{rev: r.c.rev, from: rev, reset: true})
			r.c.window.restart(rev)
			r.c.logger.Warn("the store's revision went back (was etcd restored from a backup?); every watch of the resource ends with Expired",
				"from", r.c.rev, "to", rev)
			r.c.rev = rev
			return true
		}
		versions, gap := r.diff(items, rev)
		r.c.index.build(versions)
		if len(gap) > 0 {
			r.c.window.push(&change{rev: rev, from: r.c.rev, gap: gap})
			r.c.logger.Info("the re-list found changes the watch missed; watches they concern end with Expired",
				"from", r.c.rev, "to", rev, "changes", len(gap))
		}
		r.c.rev = rev
		return true
	})
}

// newVersions returns the versions of a list, for an index built from scratch.
func newVersions(items []storage.KeyValue) []*version {
	versions := make([]*version, len(items))
	for i, kv := range items {
		versions[i] = newVersion(kv)
	}
	return versions
}

// diff compares a list at rev (sorted by key) with the index: it returns the versions of the list,
// reusing the index's where the object did not change, and one change per key that did (a deleted
// key's at rev). The caller holds mu.
func (r reflector) diff(items []storage.KeyValue, rev int64) ([]*version, []*change) {
	versions := make([]*version, 0, len(items))
	var gap []*change
	old := cursor{chunks: r.c.index.chunks}
	for _, kv := range items {
		for o := old.peek(); o != nil && o.kv.Key < kv.Key; o = old.peek() {
			gap = append(gap, newChange(rev, o.kv.Key, nil, o))
			old.next()
		}
		if o := old.peek(); o != nil && o.kv.Key == kv.Key {
			old.next()
			if o.kv.ModRevision == kv.ModRevision {
				versions = append(versions, o)
				continue
			}
			v := newVersion(kv)
			versions = append(versions, v)
			gap = append(gap, newChange(kv.ModRevision, kv.Key, v, o))
			continue
		}
		v := newVersion(kv)
		versions = append(versions, v)
		gap = append(gap, newChange(kv.ModRevision, kv.Key, v, nil))
	}
	for o := old.next(); o != nil; o = old.next() {
		gap = append(gap, newChange(rev, o.kv.Key, nil, o))
	}
	return versions, gap
}
