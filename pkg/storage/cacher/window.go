package cacher

import "sort"

// window is the bounded ring of the most recent changes, in revision order. Each change has a
// sequence number (its position in the cacher's history); the ring keeps the last len(buf) of them.
// Watchers read it at their own pace, so a change is stored once however many watchers there are.
type window struct {
	buf []*change
	// size is the ring's capacity; buf grows up to it.
	size int
	// head is the sequence number the next change gets.
	head uint64
	// floor is the first sequence number a new watcher may start at: the one after the last reset.
	floor uint64
	// oldest is the revision after which every change is in the window: the watch of any revision
	// from it on can be served.
	oldest int64
}

func newWindow(size int) window { return window{size: size} }

// first is the sequence number of the oldest change still held.
func (w *window) first() uint64 { return w.head - uint64(len(w.buf)) }

func (w *window) at(seq uint64) *change { return w.buf[seq%uint64(w.size)] }

func (w *window) push(ch *change) {
	if len(w.buf) < w.size {
		w.buf = append(w.buf, ch)
	} else {
		slot := w.head % uint64(w.size)
		// Changes from before a reset have revisions of a history that no longer counts.
		if w.first() >= w.floor {
			w.oldest = max(w.oldest, w.buf[slot].rev)
		}
		w.buf[slot] = ch
	}
	w.head++
}

// after returns the sequence number of the first change after rev that a new watcher may read, and
// false if the window no longer holds every change after rev.
func (w *window) after(rev int64) (uint64, bool) {
	if rev < w.oldest {
		return 0, false
	}
	start := max(w.first(), w.floor)
	n := int(w.head - start)
	i := sort.Search(n, func(i int) bool { return w.at(start+uint64(i)).rev > rev })
	return start + uint64(i), true
}

// restart forgets the history for new watchers after a reset: watchers reading before floor meet the
// reset change and end.
func (w *window) restart(rev int64) {
	w.floor = w.head
	w.oldest = rev
}
