package cacher

import (
	"context"
	"time"
)

const (
	// consistentWait bounds how long a consistent read waits for the cache to reach etcd's revision;
	// past it the store answers, which is always right, only slower.
	consistentWait = time.Second
	// progressEvery spaces the cacher's progress requests while readers wait: etcd drops a request
	// it cannot answer yet (a watch on the stream still catching up), so a waiting reader asks again.
	progressEvery = 5 * time.Millisecond
)

// consistent says whether the cache may answer a read that must reflect every write completed before
// it (resourceVersion unset), as kube's consistent reads from cache do: it reads etcd's current
// revision (a quorum read shared with concurrent callers) and waits, briefly, for the cache to reach
// it. Writes to other resources move etcd's revision without an event here, so the wait asks the
// store's watches for a progress mark. False means the store must answer; an error that etcd could
// not be asked, which the store would have failed on too.
func (c *Cacher) consistent(ctx context.Context) (bool, error) {
	if c.progress == nil || !c.serving() {
		return false, nil
	}
	rev, err := c.store.CurrentRevision(ctx)
	if err != nil {
		return false, err
	}
	return c.reach(ctx, rev), nil
}

// reach waits until the cache's revision is at least rev, at most consistentWait; false if it is not.
func (c *Cacher) reach(ctx context.Context, rev int64) bool {
	c.mu.RLock()
	current, advanced := c.rev, c.advanced
	c.mu.RUnlock()
	if current >= rev {
		return true
	}
	deadline := time.NewTimer(consistentWait)
	defer deadline.Stop()
	ask := time.NewTicker(progressEvery)
	defer ask.Stop()
	c.askProgress(ctx)
	for {
		select {
		case <-advanced:
		case <-ask.C:
			c.askProgress(ctx)
		case <-deadline.C:
			return false
		case <-ctx.Done():
			return false
		case <-c.stopped:
			return false
		}
		c.mu.RLock()
		current, advanced = c.rev, c.advanced
		c.mu.RUnlock()
		if current >= rev {
			return true
		}
	}
}

// askProgress requests progress marks, at most once per progressEvery however many readers wait.
func (c *Cacher) askProgress(ctx context.Context) {
	now := time.Now().UnixNano()
	last := c.progressAsked.Load()
	if now-last < int64(progressEvery) || !c.progressAsked.CompareAndSwap(last, now) {
		return
	}
	if err := c.progress.RequestWatchProgress(ctx); err != nil {
		// The wait ends at its deadline and the store answers; etcd trouble shows there.
		c.logger.Debug("requesting watch progress failed", "err", err)
	}
}
