package cacher

import (
	"context"
	"fmt"
	"iter"
	"strings"

	"github.com/apictl/apictl/pkg/storage"
)

// readBatch is how many changes a watcher takes from the window under one read lock.
const readBatch = 64

// watcher is one watch: a goroutine that reads the cacher's window at its own pace, selects the
// changes for its prefix and filter, and sends their shared events to out, converted by conv (to
// *Event for WatchEvents, to storage.Event for Watch). Nothing is copied per watcher but the
// pointers in out, so a reader that does not read costs a bounded buffer, however much changes.
type watcher[T any] struct {
	c      *Cacher
	ctx    context.Context
	prefix string
	filter storage.Filter
	// shared, when set, is filter in the form whose readings of a change the watchers share (selects).
	shared *storage.SharedFilter
	out    chan T
	// conv converts an event for out; false drops it (bookmarks for storage watches).
	conv func(*Event) (T, bool)
	// ask carries the handler's bookmark requests; nil when there are none.
	ask chan struct{}

	// initial, when set, are the versions to send as Added events before the changes, for a state at
	// initialRev; initialEnd asks for the Bookmark that ends them.
	initial    iter.Seq[*version]
	initialRev int64
	initialEnd bool

	// next is the sequence number of the next change to take from the window.
	next uint64
	// skip: changes up to it are not delivered (they are in the state the watch started from).
	skip int64
	// rev is the revision up to which every change has been delivered (0 during initial events).
	rev int64
	// bookmarks is the cacher's bookmark tick this watcher last answered.
	bookmarks uint64
}

// startLocked starts w with the changes from window position seq, after revision rev. The caller
// holds the cacher's lock (for reading at least) and has checked it is not closed.
func startLocked[T any](c *Cacher, w *watcher[T], seq uint64, rev int64) {
	w.next, w.skip, w.bookmarks = seq, rev, c.bookmarks
	if w.initial == nil {
		w.rev = rev
	}
	c.watchers.Add(1)
	c.liveWatchers.Add(1)
	go w.run()
}

// expire ends w before it starts, with one Error event: the window does not reach back to rev.
func (w *watcher[T]) expire(rev, oldest int64) {
	if v, ok := w.conv(&Event{Type: storage.Error, Revision: rev, Err: expired(w.prefix, rev, oldest)}); ok {
		w.out <- v
	}
	close(w.out)
}

func (w *watcher[T]) run() {
	defer w.c.watchers.Done()
	defer w.c.liveWatchers.Add(-1)
	defer close(w.out)
	if w.initial != nil && !w.sendInitial() {
		return
	}
	var batch []*change
	for {
		var (
			notify    <-chan struct{}
			headRev   int64
			bookmarks uint64
			err       error
		)
		batch, notify, headRev, bookmarks, err = w.read(batch[:0])
		if err != nil {
			w.finish(err)
			return
		}
		for i, ch := range batch {
			batch[i] = nil
			w.next++
			ev, err := w.eventFor(ch)
			if err != nil {
				w.finish(err)
				return
			}
			if ev != nil && !w.send(ev) {
				return
			}
			if !ch.reset {
				w.rev = max(w.rev, ch.rev)
			}
		}
		if len(batch) > 0 {
			select {
			case <-w.ask:
				if !w.bookmark() {
					return
				}
			default:
			}
			continue
		}
		// Caught up: every change up to the cache's revision is delivered.
		w.rev = max(w.rev, headRev)
		if bookmarks != w.bookmarks {
			w.bookmarks = bookmarks
			if !w.bookmark() {
				return
			}
		}
		select {
		case <-notify:
		case <-w.ask:
			if !w.bookmark() {
				return
			}
		case <-w.ctx.Done():
			return
		case <-w.c.stopped:
			return
		}
	}
}

// sendInitial sends the initial events and, if asked, the Bookmark that ends them.
func (w *watcher[T]) sendInitial() bool {
	for v := range w.initial {
		if w.filter != nil {
			ok, err := w.filter(v.kv)
			if err != nil {
				w.finish(err)
				return false
			}
			if !ok {
				continue
			}
		}
		if !w.send(v.addedEvent()) {
			return false
		}
	}
	w.initial = nil
	w.rev = max(w.rev, w.initialRev)
	return !w.initialEnd || w.send(&Event{Type: Bookmark, Revision: w.initialRev, InitialEventsEnd: true})
}

func (w *watcher[T]) bookmark() bool {
	return w.send(&Event{Type: Bookmark, Revision: w.rev})
}

// read takes the next changes from the window into batch. It also returns what the watcher waits on
// when there are none: the wake-up channel, the cache's revision and bookmark tick.
func (w *watcher[T]) read(batch []*change) ([]*change, <-chan struct{}, int64, uint64, error) {
	c := w.c
	c.mu.RLock()
	defer c.mu.RUnlock()
	if w.next < c.window.first() {
		return nil, nil, 0, 0, w.tooSlow(c.window.head)
	}
	if batch == nil && w.next < c.window.head {
		// Allocated on first use: a watcher that waits costs no batch.
		batch = make([]*change, 0, readBatch)
	}
	for seq := w.next; seq < c.window.head && len(batch) < cap(batch); seq++ {
		batch = append(batch, c.window.at(seq))
	}
	return batch, c.notify, c.rev, c.bookmarks, nil
}

// eventFor returns the event ch is for this watcher, nil if it does not concern it, or the error
// that ends the watch.
func (w *watcher[T]) eventFor(ch *change) (*Event, error) {
	switch {
	case ch.reset:
		return nil, reset(w.prefix, w.rev, ch.from)
	case ch.rev <= w.skip:
		return nil, nil
	case ch.gap != nil:
		for _, g := range ch.gap {
			ev, err := w.selects(g)
			if err != nil {
				return nil, err
			}
			if ev != nil {
				return nil, expired(w.prefix, w.rev, ch.rev)
			}
		}
		return nil, nil
	}
	return w.selects(ch)
}

// selects applies the prefix and the filter to both states of ch: entering the selection is Added,
// staying in it Modified, leaving it Deleted.
func (w *watcher[T]) selects(ch *change) (*Event, error) {
	if !strings.HasPrefix(ch.key, w.prefix) {
		return nil, nil
	}
	inCur, inPrev := ch.cur != nil, ch.prev != nil
	if w.shared != nil {
		r, err := ch.read(w.shared.Reader)
		if err != nil {
			return nil, err
		}
		inCur = inCur && w.shared.Match(r.cur)
		inPrev = inPrev && w.shared.Match(r.prev)
	} else if w.filter != nil {
		var err error
		if inCur {
			if inCur, err = w.filter(ch.cur.kv); err != nil {
				return nil, err
			}
		}
		if inPrev {
			if inPrev, err = w.filter(ch.prev.kv); err != nil {
				return nil, err
			}
		}
	}
	switch {
	case inCur && inPrev:
		return ch.cur.modifiedEvent(), nil
	case inCur:
		return ch.cur.addedEvent(), nil
	case inPrev:
		return ch.deletedEvent(), nil
	}
	return nil, nil
}

// send hands ev to the reader. While the buffer is full it waits, and each time the window grows it
// checks how far behind the watcher has fallen; past MaxWatcherLag it gives up on the reader.
func (w *watcher[T]) send(ev *Event) bool {
	v, ok := w.conv(ev)
	if !ok {
		return true
	}
	select {
	case w.out <- v:
		return true
	default:
	}
	for {
		w.c.mu.RLock()
		head, notify := w.c.window.head, w.c.notify
		w.c.mu.RUnlock()
		if head-w.next > uint64(w.c.cfg.MaxWatcherLag) {
			w.finish(w.tooSlow(head))
			return false
		}
		select {
		case w.out <- v:
			return true
		case <-notify:
		case <-w.ctx.Done():
			return false
		case <-w.c.stopped:
			return false
		}
	}
}

// finish delivers the Error event that ends the watch, once the reader has taken what is buffered.
func (w *watcher[T]) finish(err error) {
	v, ok := w.conv(&Event{Type: storage.Error, Revision: w.rev, Err: err})
	if !ok {
		return
	}
	select {
	case w.out <- v:
	case <-w.ctx.Done():
	case <-w.c.stopped:
	}
}

func (w *watcher[T]) tooSlow(head uint64) error {
	behind := head - w.next
	w.c.logger.Info("cutting off a watcher whose reader fell behind", "watch", w.prefix, "behind", behind, "revision", w.rev)
	resume := "list again"
	if w.rev > 0 {
		resume = fmt.Sprintf("watch again from resourceVersion %d", w.rev)
	}
	return &storage.StorageError{Code: storage.TooSlow, Op: "watch", Key: w.prefix, ResourceVersion: w.rev,
		Err: fmt.Errorf("the reader of the watch on %q fell %d changes behind (the limit is %d) and was cut off; %s",
			w.prefix, behind, w.c.cfg.MaxWatcherLag, resume)}
}
