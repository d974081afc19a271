package storage

import (
	"context"
	"log/slog"
	"time"
)

// ReflectHandler receives what Reflect reads: a whole list (reset, every item), or one event's object
// (deleted for a Deleted event). It returns false to stop Reflect.
type ReflectHandler func(reset bool, items []KeyValue, deleted bool) bool

// reflectRetry is how long Reflect waits after a failed list or watch.
const reflectRetry = time.Second

// Filler is a store that fills itself from another before it answers from memory, as a watch cache
// does: Ready closes once it can.
type Filler interface {
	Ready() <-chan struct{}
}

// Reflect lists prefix, hands the list to handle, then follows the changes from that revision on, and
// lists again whenever the watch ends, until ctx ends or handle returns false: what client-go's
// reflector does for the server's own controllers. With a watch cache as store the reads come from
// memory (resourceVersion 0), so nothing polls etcd.
//
// A store that is a Filler is waited for first: until it is ready it would pass the list on to etcd,
// and at start, with many objects stored, that second full read of the resource competes with the
// cache's own for etcd and the CPU and delays the moment the server is ready.
func Reflect(ctx context.Context, store Store, prefix string, handle ReflectHandler, log *slog.Logger) {
	if f, ok := store.(Filler); ok {
		select {
		case <-f.Ready():
		case <-ctx.Done():
			return
		}
	}
	for ctx.Err() == nil {
		list, err := store.List(ctx, prefix, ListOptions{ResourceVersion: "0"})
		if err != nil {
			if ctx.Err() == nil {
				log.Warn("listing failed; retrying", "prefix", prefix, "err", err)
				sleep(ctx, reflectRetry)
			}
			continue
		}
		if !handle(true, list.Items, false) {
			return
		}
		events, err := store.Watch(ctx, prefix, WatchOptions{Revision: list.Revision})
		if err != nil {
			if ctx.Err() == nil {
				log.Warn("watching failed; listing again", "prefix", prefix, "err", err)
				sleep(ctx, reflectRetry)
			}
			continue
		}
		for ev := range events {
			switch ev.Type {
			case Added, Modified, Deleted:
				if !handle(false, []KeyValue{ev.Object}, ev.Type == Deleted) {
					return
				}
			case Error:
				log.Debug("the watch ended; listing again", "prefix", prefix, "err", ev.Err)
			}
		}
	}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
