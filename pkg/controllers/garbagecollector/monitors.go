package garbagecollector

import (
	"context"
	"log/slog"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/apictl/apictl/pkg/storage"
)

// source is one followed resource and its monitor: a storage.Reflect of the resource's watch cache
// (a list from memory, then its changes), kube's monitor without an informer's copy of the objects.
type source struct {
	res  Resource
	kind *kindRef
	// nodes counts the observed nodes of the resource (under the graph's mutex): a relist looks for
	// vanished objects only when there are some.
	nodes int

	cancel context.CancelFunc
	done   chan struct{}
	synced chan struct{}
}

// monitors keeps one source per followed resource, in step with the Source's snapshots. Owned by
// the goroutine of run.
type monitors struct {
	g       *graph
	log     *slog.Logger
	sources map[schema.GroupResource]*source
	wg      sync.WaitGroup
}

func newMonitors(g *graph, log *slog.Logger) *monitors {
	return &monitors{g: g, log: log, sources: map[schema.GroupResource]*source{}}
}

// sync starts the monitors of new resources, restarts those whose watch cache or kind changed, and
// stops those of resources no longer served. It returns the sources of the snapshot.
func (ms *monitors) sync(ctx context.Context, resources []Resource) []*source {
	next := make(map[schema.GroupResource]*source, len(resources))
	out := make([]*source, 0, len(resources))
	for _, r := range resources {
		gr := r.Resource.GroupResource()
		old := ms.sources[gr]
		if old != nil && old.res == r {
			next[gr] = old
			out = append(out, old)
			continue
		}
		if old != nil {
			ms.stop(old)
		}
		ms.g.mu.Lock()
		s := &source{res: r, kind: ms.g.kind(r.Resource.GroupVersion().String(), r.Kind), synced: make(chan struct{})}
		if old != nil {
			// The new monitor's first list is compared with what the old one saw.
			for _, n := range ms.g.nodes {
				if n.src == old {
					n.src = s
					s.nodes++
				}
			}
		}
		ms.g.mu.Unlock()
		ms.start(ctx, s)
		next[gr] = s
		out = append(out, s)
	}
	for gr, s := range ms.sources {
		if _, ok := next[gr]; !ok {
			ms.stop(s)
			ms.g.mu.Lock()
			ms.g.unwatch(s)
			ms.g.mu.Unlock()
		}
	}
	ms.sources = next
	return out
}

func (ms *monitors) start(ctx context.Context, s *source) {
	mctx, cancel := context.WithCancel(ctx)
	s.cancel, s.done = cancel, make(chan struct{})
	ms.wg.Go(func() {
		defer close(s.done)
		log := ms.log.With("resource", s.res.Resource.GroupResource().String())
		storage.Reflect(mctx, s.res.Store, s.res.Prefix, func(reset bool, items []storage.KeyValue, deleted bool) bool {
			ms.apply(s, reset, items, deleted, log)
			if reset {
				select {
				case <-s.synced:
				default:
					close(s.synced)
				}
			}
			return true
		}, log)
	})
}

func (ms *monitors) stop(s *source) {
	s.cancel()
	<-s.done
}

// stopAll stops every monitor and waits for them.
func (ms *monitors) stopAll() {
	for _, s := range ms.sources {
		s.cancel()
	}
	ms.wg.Wait()
}

// apply decodes what a monitor read and applies it to the graph.
func (ms *monitors) apply(s *source, reset bool, items []storage.KeyValue, deleted bool, log *slog.Logger) {
	metas := make([]*objectMeta, 0, len(items))
	undecoded := false
	for _, kv := range items {
		m, err := decodeMeta(kv.Value)
		if err != nil {
			log.Warn("a stored object is left out of the dependency graph", "key", kv.Key, "err", err)
			undecoded = true
			continue
		}
		metas = append(metas, m)
	}
	g := ms.g
	g.mu.Lock()
	defer g.mu.Unlock()
	var listed map[types.UID]struct{}
	// A relist with an object that could not be read says nothing of that object: sweeping would
	// take it for deleted and its dependents with it.
	if reset && s.nodes > 0 && !undecoded {
		listed = make(map[types.UID]struct{}, len(metas))
	}
	for _, m := range metas {
		if deleted {
			g.observeDelete(s, m)
			continue
		}
		g.observe(s, m)
		if listed != nil {
			listed[m.UID] = struct{}{}
		}
	}
	if listed != nil {
		g.sweep(s, listed)
	}
}

// sweep removes the observed nodes of s that are not in listed, as deletes (kube's informer reports
// objects missing from a relist as deleted). The caller holds g.mu.
func (g *graph) sweep(s *source, listed map[types.UID]struct{}) {
	if s.nodes == 0 {
		return
	}
	var gone []*node
	for _, n := range g.nodes {
		if n.src == s {
			if _, ok := listed[n.uid]; !ok {
				gone = append(gone, n)
			}
		}
	}
	for _, n := range gone {
		g.removeNode(n, n.identity())
	}
}
