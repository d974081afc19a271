package apiserver

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apictl/apictl/pkg/controllers/garbagecollector"
	"github.com/apictl/apictl/pkg/serve"
	"github.com/apictl/apictl/pkg/storage"
	"github.com/apictl/apictl/pkg/storage/cacher"
)

// addGarbageCollector registers kube's garbage collector with the cluster-wide controllers: it
// follows every served resource through the watch caches (the CRD controller says when custom
// resources come and go) and writes through the in-process clients.
func (a *assembly) addGarbageCollector() error {
	s, cfg, cl, caches, ctrls := a.server, a.cfg, a.cl, a.caches, &a.ctrls
	gc, err := garbagecollector.New(garbagecollector.Config{
		Source:     &gcSource{server: s, caches: caches},
		Client:     cl.dynamic,
		Events:     cl.kube.CoreV1(),
		Registerer: s.Registry(),
		Logger:     cfg.Logger,
	})
	if err != nil {
		return fmt.Errorf("creating the garbage collector: %w", err)
	}
	ctrls.add("garbage-collector-controller", gc.Run)
	return nil
}

// gcSource tells the garbage collector what the server serves: the live API, and the watch caches
// of the built-in resources and of the custom resources served now.
type gcSource struct {
	server *serve.Server
	caches *watchCaches
}

func (g *gcSource) Snapshot() garbagecollector.Snapshot {
	// The channel is taken first, so that a change made while the snapshot is read closes it.
	changed := g.caches.customChanged.wait()
	api := g.server.API()
	var custom map[schema.GroupResource]*cacher.Cacher
	if list := g.caches.custom.Load(); list != nil {
		custom = (*list)()
	}
	stores := func(gr schema.GroupResource) (storage.Store, bool) {
		if st, ok := g.caches.byResource[gr]; ok {
			return st, true
		}
		if c, ok := custom[gr]; ok {
			return c, true
		}
		return nil, false
	}
	return garbagecollector.Snapshot{API: api, Resources: garbagecollector.Resources(api, stores), Changed: changed}
}

// changes tells waiters that something changed: wait returns a channel that notify closes.
type changes struct {
	mu sync.Mutex
	ch chan struct{}
}

func (c *changes) wait() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ch == nil {
		c.ch = make(chan struct{})
	}
	return c.ch
}

func (c *changes) notify() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ch != nil {
		close(c.ch)
		c.ch = nil
	}
}
