package cacher

import (
	"context"
	"fmt"
	"iter"
	"strconv"

	"github.com/apictl/apictl/pkg/storage"
)

// WatchOptions say where a watch starts and what it sees, with the API's semantics. The handler
// validates the request first (sendInitialEvents needs resourceVersionMatch=NotOlderThan).
type WatchOptions struct {
	// ResourceVersion is the API's. "" and "0": an Added event for every object of the cache's current
	// state, then the changes after it. "N": exactly the changes after N; N older than the window gives
	// one Error event with an Expired error, N newer than etcd waits up to WaitTimeout and then fails
	// with TooLargeResourceVersion.
	ResourceVersion string
	// SendInitialEvents is the API's sendInitialEvents=true: Added events for a state at least as new
	// as ResourceVersion ("" means etcd's current revision, "0" any), then a Bookmark with
	// InitialEventsEnd, then the changes after that state.
	SendInitialEvents bool
	// Filter selects objects (label and field selectors). It is applied to the new and the previous
	// state of each change: an object entering the selection is Added, one leaving it is Deleted (with
	// its last state, at the change's revision). Nil selects everything. It is called from the
	// watcher's goroutine and must not modify the KeyValue.
	Filter storage.Filter
	// Shared, when set, is the filter in the form whose reading of a change every watcher with the
	// same Reader shares (one decode per change rather than one per watcher); it takes Filter's place.
	Shared *storage.SharedFilter
}

// Watcher is one watch of a cacher.
type Watcher struct {
	events   <-chan *Event
	bookmark chan struct{}
}

// Events returns the watch's events, in revision order (initial events in key order first). The
// channel closes when the watch's context ends, after an Error event, or when the cacher stops.
//
// Besides the objects' events it carries Bookmarks: about every BookmarkInterval, after a
// RequestBookmark, and with SendInitialEvents the one that ends the initial events. The handler
// forwards them or not (allowWatchBookmarks). A reader that falls more than MaxWatcherLag changes
// behind gets an Error event with a TooSlow error; an Expired one means the revision asked for (or a
// re-list's gap) is beyond what the cache can replay: the client must list again.
func (w *Watcher) Events() <-chan *Event { return w.events }

// RequestBookmark asks for a Bookmark event as soon as the watcher has delivered what it holds; the
// handler calls it shortly before the watch's deadline, as kube does, so that the client can resume
// from a recent revision.
func (w *Watcher) RequestBookmark() {
	if w.bookmark == nil {
		return
	}
	select {
	case w.bookmark <- struct{}{}:
	default:
	}
}

// WatchEvents watches the keys under prefix (the cacher's prefix or a namespace of it, such as
// "configmaps/ns/") with the API's semantics, until ctx ends. It fails with Invalid for a prefix the
// cacher does not hold or an unparsable resourceVersion, Unavailable if the cache is not ready within
// WaitTimeout, and TooLargeResourceVersion for a revision etcd does not reach within WaitTimeout. An
// Expired revision is not a failure: the watch opens and delivers one Error event, as kube's does.
func (c *Cacher) WatchEvents(ctx context.Context, prefix string, opts WatchOptions) (*Watcher, error) {
	prefix, ok := c.within(prefix)
	if !ok {
		return nil, &storage.StorageError{Code: storage.Invalid, Op: "watch", Key: prefix,
			Err: fmt.Errorf("watch %q: the watch cache holds %q only", prefix, c.prefix)}
	}
	if err := c.waitReady(ctx, "watch"); err != nil {
		return nil, err
	}
	if opts.Shared != nil {
		opts.Filter = opts.Shared.Filter()
	}
	w := &watcher[*Event]{
		c:      c,
		ctx:    ctx,
		prefix: prefix,
		filter: opts.Filter,
		shared: opts.Shared,
		out:    make(chan *Event, c.cfg.WatcherBuffer),
		conv:   func(e *Event) (*Event, bool) { return e, true },
		ask:    make(chan struct{}, 1),
	}
	rv := opts.ResourceVersion
	var err error
	switch {
	case rv == "" && opts.SendInitialEvents:
		err = c.startConsistent(ctx, w)
	case rv == "" || rv == "0":
		w.initialEnd = opts.SendInitialEvents
		err = c.startFromCache(w)
	default:
		n, perr := storage.ParseResourceVersion(rv)
		if perr != nil {
			return nil, perr
		}
		if opts.SendInitialEvents {
			err = c.startNotOlderThan(ctx, w, n)
		} else {
			err = c.startAfter(ctx, w, n)
		}
	}
	if err != nil {
		return nil, err
	}
	return &Watcher{events: w.out, bookmark: w.ask}, nil
}

// Watch implements storage.Store.Watch on the cache: the changes under prefix after opts.Revision
// (after etcd's current revision for 0), with opts.Filter applied with transitions as in
// WatchEvents. Bookmarks are left out, and the objects are as stored, without resourceVersion. A
// prefix outside the cacher's goes to the wrapped store.
func (c *Cacher) Watch(ctx context.Context, prefix string, opts storage.WatchOptions) (<-chan storage.Event, error) {
	sub, ok := c.within(prefix)
	if !ok {
		return c.store.Watch(ctx, prefix, opts)
	}
	if opts.Revision < 0 {
		return nil, &storage.StorageError{Code: storage.Invalid, Op: "watch", Key: sub,
			Err: fmt.Errorf("watch: revision %d is negative", opts.Revision)}
	}
	if err := c.waitReady(ctx, "watch"); err != nil {
		return nil, err
	}
	start := opts.Revision
	if start == 0 {
		// "From now" must mean from this call, not from wherever the cache happens to be.
		current, err := c.store.CurrentRevision(ctx)
		if err != nil {
			return nil, err
		}
		start = current
	}
	w := &watcher[storage.Event]{
		c:      c,
		ctx:    ctx,
		prefix: sub,
		filter: opts.Filter,
		out:    make(chan storage.Event, c.cfg.WatcherBuffer),
		conv:   storeEvent,
	}
	// Like etcd's, a watch from a revision not reached yet waits for it.
	if err := register(c, w, start); err != nil {
		return nil, err
	}
	return w.out, nil
}

func storeEvent(e *Event) (storage.Event, bool) {
	switch e.Type {
	case Bookmark:
		return storage.Event{}, false
	case storage.Error:
		return storage.Event{Type: storage.Error, Err: e.Err, Revision: e.Revision}, true
	}
	return storage.Event{Type: e.Type, Object: e.KeyValue(), Revision: e.Revision}, true
}

// startFromCache starts w with the cache's current state as initial events.
func (c *Cacher) startFromCache(w *watcher[*Event]) error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return c.stoppedError("watch")
	}
	snap, rev := c.index.snapshot(), c.rev
	w.initial = snap.ascend(w.prefix)
	w.initialRev = rev
	startLocked(c, w, c.window.head, rev)
	return nil
}

// startConsistent starts a watch with initial events at least as new as etcd's current revision.
func (c *Cacher) startConsistent(ctx context.Context, w *watcher[*Event]) error {
	current, err := c.store.CurrentRevision(ctx)
	if err != nil {
		return err
	}
	return c.startInitial(ctx, w, current)
}

// startNotOlderThan starts a watch with initial events for a state at least as new as rev, once etcd
// has reached rev.
func (c *Cacher) startNotOlderThan(ctx context.Context, w *watcher[*Event], rev int64) error {
	if c.revision() < rev {
		if err := c.waitFor(ctx, "watch", w.prefix, rev); err != nil {
			return err
		}
	}
	return c.startInitial(ctx, w, rev)
}

// startInitial starts a watch with initial events for a state at least as new as rev, which etcd has
// reached.
//
// A cache behind rev cannot tell whether it lacks a change up to rev or whether the revisions since
// its own went to other resources: etcd's revision is shared. A progress mark from the store's watch
// settles it (reach); without one in time, the initial state comes from the store, and the watch goes
// on from the cache's window after the list's revision.
func (c *Cacher) startInitial(ctx context.Context, w *watcher[*Event], rev int64) error {
	w.initialEnd = true
	if c.revision() >= rev || (c.progress != nil && c.reach(ctx, rev)) {
		return c.startFromCache(w)
	}
	list, err := c.store.List(ctx, w.prefix, storage.ListOptions{ResourceVersion: strconv.FormatInt(rev, 10),
		ResourceVersionMatch: storage.MatchNotOlderThan})
	if err != nil {
		return err
	}
	w.initialRev = list.Revision
	w.initial = func(yield func(*version) bool) {
		for _, kv := range list.Items {
			if !yield(newVersion(kv)) {
				return
			}
		}
	}
	return register(c, w, list.Revision)
}

// startAfter starts a watch of the changes after rev.
func (c *Cacher) startAfter(ctx context.Context, w *watcher[*Event], rev int64) error {
	if c.revision() < rev {
		if err := c.waitFor(ctx, "watch", w.prefix, rev); err != nil {
			return err
		}
	}
	return register(c, w, rev)
}

// register starts w with the changes after rev: from the window if the cache is past rev, else with
// the changes to come, skipping those up to rev. A rev the window no longer covers gives w one
// Expired error event.
func register[T any](c *Cacher, w *watcher[T], rev int64) error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return c.stoppedError("watch")
	}
	if rev >= c.rev {
		startLocked(c, w, c.window.head, rev)
		return nil
	}
	seq, ok := c.window.after(rev)
	if !ok {
		w.expire(rev, c.window.oldest)
		return nil
	}
	startLocked(c, w, seq, rev)
	return nil
}

// ascend returns the versions of the snapshot under prefix, in key order.
func (s snapshot) ascend(prefix string) iter.Seq[*version] {
	return func(yield func(*version) bool) {
		end := prefixEnd(prefix)
		for cur := s.seek(prefix); ; {
			v := cur.next()
			if v == nil || v.kv.Key >= end || !yield(v) {
				return
			}
		}
	}
}

// prefixEnd is the first key after every key under prefix (which ends in "/").
func prefixEnd(prefix string) string {
	return prefix[:len(prefix)-1] + string(rune('/'+1))
}
