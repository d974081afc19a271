package etcd3

import (
	"context"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apiserver/pkg/storage/value"

	"github.com/apictl/apictl/pkg/storage"
)

// Watch streams the changes under prefix after opts.Revision (after the current revision when it is
// 0, so that every change made once Watch has returned is seen). It runs one etcd watch with previous
// values, so that a Deleted event carries the object's last state.
//
// The channel closes when ctx ends, after an Error event, or when etcd ends the watch. Error events
// carry an Expired error when the revision has been compacted, Unavailable when etcd lost its leader,
// and TooSlow when the reader let the channel's buffer (Config.WatchBufferSize) stay full: the store
// does not hold an unbounded backlog for a reader that does not read. The events buffered before the
// error are delivered first, so the reader can watch again from the last revision it received.
func (s *Store) Watch(ctx context.Context, prefix string, opts storage.WatchOptions) (<-chan storage.Event, error) {
	prefix, err := rangePrefix("watch", prefix)
	if err != nil {
		return nil, err
	}
	if opts.Revision < 0 {
		return nil, invalid("watch: revision %d is negative", opts.Revision)
	}
	start := opts.Revision
	if start == 0 {
		// "From now" must mean from this call, not from whenever etcd registers the watch.
		current, err := s.CurrentRevision(ctx)
		if err != nil {
			return nil, err
		}
		start = current
	}
	// Requiring a leader ends the watch of a member cut off from its cluster, instead of letting it
	// wait silently for changes that cannot reach it.
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	w := &watch{
		ctx:      ctx,
		cancel:   cancel,
		prefix:   prefix,
		start:    start,
		last:     start,
		filter:   opts.Filter,
		progress: opts.ProgressNotify,
		out:      make(chan storage.Event, s.watchBufferSize),
		grace:    s.slowWatchGrace,
		store:    s,
		updates:  s.watcher.Watch(wctx, prefix, clientv3.WithPrefix(), clientv3.WithPrevKV(), clientv3.WithRev(start+1)),
	}
	s.activeWatches.Add(1)
	go w.run()
	return w.out, nil
}

// RequestWatchProgress implements storage.ProgressRequester: etcd answers on the stream every watch
// of the store shares, and each watch opened with ProgressNotify turns the answer into a Progress event.
func (s *Store) RequestWatchProgress(ctx context.Context) error {
	// The stream is chosen by the context's metadata: it must be the watches' (see Watch).
	if err := s.watcher.RequestProgress(clientv3.WithRequireLeader(ctx)); err != nil {
		return s.interpret("request watch progress", "", err)
	}
	return nil
}

type watch struct {
	ctx    context.Context
	cancel context.CancelFunc
	prefix string
	// start is the revision the watch began after; last is the revision of the last event buffered.
	start, last int64
	filter      storage.Filter
	progress    bool
	out         chan storage.Event
	grace       time.Duration
	store       *Store
	updates     clientv3.WatchChan
}

func (w *watch) run() {
	defer w.store.activeWatches.Add(-1)
	defer close(w.out)
	defer w.cancel()
	for resp := range w.updates {
		if err := resp.Err(); err != nil {
			w.fail(err, resp.CompactRevision)
			return
		}
		if resp.IsProgressNotify() {
			// Every change up to the header's revision has been delivered (etcd answers a progress
			// request only for a watch that has caught up).
			if w.progress && resp.Header.Revision > w.last && !w.send(storage.Event{Type: storage.Progress, Revision: resp.Header.Revision}) {
				return
			}
			continue
		}
		// The transformer is chosen per response, so that a watch that lasts (the watch cache's) reads
		// what is written after the configuration is reloaded with a new key.
		t := w.store.codec.transformer(w.prefix)
		for _, ev := range resp.Events {
			event, err := parseEvent(ev)
			if err == nil && needsDecode(t, event.Object.Value) {
				err = w.decode(t, &event, ev)
			}
			if err != nil {
				w.sendError(err)
				return
			}
			if w.filter != nil {
				ok, err := w.filter(event.Object)
				if err != nil {
					w.sendError(err)
					return
				}
				if !ok {
					continue
				}
			}
			if !w.send(event) {
				return
			}
		}
	}
	if w.ctx.Err() == nil {
		w.sendError(&storage.StorageError{Code: storage.Unavailable, Op: "watch", Key: w.prefix,
			Err: fmt.Errorf("etcd at %s ended the watch on %q", w.store.endpoints, w.prefix)})
	}
}

// send buffers an event for the reader, waiting a little for room; a reader that leaves the buffer
// full gets a TooSlow error instead, and the etcd watch stops so nothing piles up for it.
func (w *watch) send(event storage.Event) bool {
	select {
	case w.out <- event:
		w.last = event.Revision
		return true
	default:
	}
	if w.grace > 0 {
		timer := time.NewTimer(w.grace)
		defer timer.Stop()
		select {
		case w.out <- event:
			w.last = event.Revision
			return true
		case <-w.ctx.Done():
			return false
		case <-timer.C:
		}
	}
	w.cancel()
	w.store.logger.Info("ending a watch whose reader fell behind", "prefix", w.prefix, "buffered", cap(w.out), "revision", w.last)
	w.sendError(&storage.StorageError{Code: storage.TooSlow, Op: "watch", Key: w.prefix, ResourceVersion: w.last,
		Err: fmt.Errorf("the reader of the watch on %q fell more than %d events behind; watch again from revision %d",
			w.prefix, cap(w.out), w.last)})
	return false
}

// sendError delivers the final Error event once the reader has taken what is buffered before it.
func (w *watch) sendError(err error) {
	select {
	case w.out <- storage.Event{Type: storage.Error, Err: err, Revision: w.last}:
	case <-w.ctx.Done():
	}
}

func (w *watch) fail(err error, compactRevision int64) {
	if w.ctx.Err() != nil {
		return
	}
	if isCompacted(err) {
		w.sendError(&storage.StorageError{Code: storage.Expired, Op: "watch", Key: w.prefix,
			ResourceVersion: w.start, CurrentRevision: compactRevision, Err: err})
		return
	}
	w.sendError(w.store.interpret("watch", w.prefix, err))
}

func parseEvent(ev *clientv3.Event) (storage.Event, error) {
	rev := ev.Kv.ModRevision
	switch {
	case ev.Type == mvccpb.DELETE:
		if ev.PrevKv == nil {
			return storage.Event{}, fmt.Errorf("etcd sent the delete of %q at revision %d without its previous value "+
				"(compacted meanwhile); watch again", ev.Kv.Key, rev)
		}
		return storage.Event{Type: storage.Deleted, Revision: rev,
			Object: storage.KeyValue{Key: string(ev.Kv.Key), Value: ev.PrevKv.Value, ModRevision: rev}}, nil
	case ev.IsCreate():
		return storage.Event{Type: storage.Added, Revision: rev, Object: keyValue(ev.Kv)}, nil
	default:
		return storage.Event{Type: storage.Modified, Revision: rev, Object: keyValue(ev.Kv)}, nil
	}
}

// decode replaces the stored value of an event's object by the caller's: the new value, or the last
// one for a delete.
func (w *watch) decode(t value.Transformer, event *storage.Event, ev *clientv3.Event) error {
	kv := ev.Kv
	if event.Type == storage.Deleted {
		kv = ev.PrevKv
	}
	decoded, _, err := w.store.codec.decode(w.ctx, t, kv)
	if err != nil {
		return err
	}
	event.Object.Value, event.Object.RVAt = decoded.Value, 0
	return nil
}
