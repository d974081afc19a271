package namespacedefault

import (
	"context"
	"log/slog"
	"time"

	"github.com/apictl/apictl/pkg/storage"
)

// handler receives a whole list (reset) or one event's object.
type handler func(reset bool, items []storage.KeyValue, deleted bool)

// reflect lists prefix, then follows its changes, and lists again when the watch ends, until ctx
// ends. Reads come from the watch cache (resourceVersion 0): no poll, no etcd round trip.
func reflect(ctx context.Context, store storage.Store, prefix string, handle handler, log *slog.Logger) {
	const retry = time.Second
	for ctx.Err() == nil {
		list, err := store.List(ctx, prefix, storage.ListOptions{ResourceVersion: "0"})
		if err != nil {
			if ctx.Err() == nil {
				log.Warn("listing failed; retrying", "prefix", prefix, "err", err)
				sleep(ctx, retry)
			}
			continue
		}
		handle(true, list.Items, false)
		events, err := store.Watch(ctx, prefix, storage.WatchOptions{Revision: list.Revision})
		if err != nil {
			if ctx.Err() == nil {
				log.Warn("watching failed; listing again", "prefix", prefix, "err", err)
				sleep(ctx, retry)
			}
			continue
		}
		for ev := range events {
			switch ev.Type {
			case storage.Added, storage.Modified, storage.Deleted:
				handle(false, []storage.KeyValue{ev.Object}, ev.Type == storage.Deleted)
			case storage.Error:
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
