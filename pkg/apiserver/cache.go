package apiserver

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apictl/apictl/pkg/routes"
	"github.com/apictl/apictl/pkg/storage"
	"github.com/apictl/apictl/pkg/storage/cacher"
	"github.com/apictl/apictl/pkg/storage/etcd3"
)

// watchCaches are one cacher per resource: each holds the resource's objects and recent changes, fed
// by one etcd watch, and serves every watch of the resource and its resourceVersion=0 reads.
type watchCaches struct {
	byResource map[schema.GroupResource]storage.Store
	all        []*cacher.Cacher
	// builtin are the caches waitReady waits for, at most initTimeout (--storage-initialization-timeout).
	builtin      []*cacher.Cacher
	initTimeout  time.Duration
	deadline     time.Time
	deadlineOnce sync.Once
	timedOut     sync.Once
	log          *slog.Logger
	running      sync.WaitGroup
	// custom, once the CRD controller is set up, lists the watch caches of the custom resources.
	custom atomic.Pointer[func() map[schema.GroupResource]*cacher.Cacher]
	// customChanged is notified by the CRD controller each time those caches (and the API with
	// them) change, so that the garbage collector follows custom resources without polling.
	customChanged changes
}

func newWatchCaches(api *routes.API, store storage.Store, initTimeout time.Duration, log *slog.Logger) (*watchCaches, error) {
	w := &watchCaches{byResource: map[schema.GroupResource]storage.Store{}, initTimeout: initTimeout, log: log}
	for _, g := range api.Groups() {
		for _, v := range g.Versions {
			for _, r := range v.Resources {
				if r.CreateOnly() {
					continue // nothing stored, nothing to watch
				}
				gr := schema.GroupResource{Group: g.Name, Resource: r.Plural}
				if r.StoredAs != nil {
					// Its objects are the other resource's: one cache holds them, served or not.
					gr = r.StoredAs.GroupResource()
				}
				if _, done := w.byResource[gr]; done {
					continue // one cache per resource, whatever its versions
				}
				c, err := cacher.New(store, storage.ResourcePrefix(gr.Group, gr.Resource, ""),
					cacher.Config{Logger: log.With("component", "watch-cache", "resource", gr.String())})
				if err != nil {
					return nil, fmt.Errorf("creating the watch cache of %s: %w", gr, err)
				}
				w.byResource[gr] = c
				w.all = append(w.all, c)
				if !r.Custom {
					w.builtin = append(w.builtin, c)
				}
			}
		}
	}
	return w, nil
}

// start runs every cache until ctx ends.
func (w *watchCaches) start(ctx context.Context, log *slog.Logger) {
	for _, c := range w.all {
		w.running.Add(1)
		go func() {
			defer w.running.Done()
			if err := c.Run(ctx); err != nil && ctx.Err() == nil {
				log.Error("a watch cache stopped", "prefix", c.Prefix(), "err", err)
			}
		}()
	}
}

// waitReady returns once the cache of every built-in resource holds its first list, or when
// initTimeout has passed, as kube's storage-readiness hook does before the server reports ready
// (KEP-4568, on by default since 1.36): a client told "ready" finds the server's own resources
// cached, while a resource of a million objects need not hold the server back. A cache still
// filling answers what etcd can answer a page at a time, and 429 to the rest (cacher.List). The
// caches of custom resources are not waited for, as kube does not.
func (w *watchCaches) waitReady(ctx context.Context) error {
	// One deadline for every hook that waits, from the first that does.
	w.deadlineOnce.Do(func() { w.deadline = time.Now().Add(w.initTimeout) })
	deadline := time.NewTimer(time.Until(w.deadline))
	defer deadline.Stop()
	for _, c := range w.builtin {
		select {
		case <-c.Ready():
		case <-deadline.C:
			w.timedOut.Do(func() {
				w.log.Warn("the watch caches of some resources are still filling after --storage-initialization-timeout: the server reports ready, and those resources answer watches and unpaged lists with 429 until they are filled",
					"timeout", w.initTimeout, "filling", w.filling())
			})
			return nil
		case <-ctx.Done():
			return fmt.Errorf("waiting for the watch cache of %q: %w", c.Prefix(), ctx.Err())
		}
	}
	return nil
}

// filling lists the prefixes of the built-in caches not yet filled.
func (w *watchCaches) filling() []string {
	var out []string
	for _, c := range w.builtin {
		select {
		case <-c.Ready():
		default:
			out = append(out, c.Prefix())
		}
	}
	return out
}

// wait returns once every cache has stopped, so that storage closes after them.
func (w *watchCaches) wait() { w.running.Wait() }

// register exports what the caches and the store do, so that a dashboard shows watchers per resource
// and the etcd watches under them.
func (w *watchCaches) register(reg prometheus.Registerer, store *etcd3.Store) error {
	etcdWatches := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "apiserver_storage_etcd_watches",
		Help: "Number of watches the server holds open on etcd: one per watch cache, whatever the number of clients.",
	}, func() float64 { return float64(store.ActiveWatches()) })
	if err := reg.Register(cacheCollector{caches: w,
		watchers: prometheus.NewDesc("apiserver_registered_watchers", "Number of currently registered watchers for a given resource.",
			[]string{"group", "resource"}, nil),
		objects: prometheus.NewDesc("apiserver_watch_cache_objects", "Number of objects in the watch cache of a resource.",
			[]string{"group", "resource"}, nil),
	}); err != nil {
		return err
	}
	return reg.Register(etcdWatches)
}

// cacheCollector reads the caches' stats when /metrics is scraped.
type cacheCollector struct {
	caches            *watchCaches
	watchers, objects *prometheus.Desc
}

func (c cacheCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.watchers
	ch <- c.objects
}

func (c cacheCollector) Collect(ch chan<- prometheus.Metric) {
	emit := func(gr schema.GroupResource, cache *cacher.Cacher) {
		stats := cache.Stats()
		ch <- prometheus.MustNewConstMetric(c.watchers, prometheus.GaugeValue, float64(stats.Watchers), gr.Group, gr.Resource)
		ch <- prometheus.MustNewConstMetric(c.objects, prometheus.GaugeValue, float64(stats.Objects), gr.Group, gr.Resource)
	}
	for gr, s := range c.caches.byResource {
		emit(gr, s.(*cacher.Cacher))
	}
	if custom := c.caches.custom.Load(); custom != nil {
		for gr, cache := range (*custom)() {
			emit(gr, cache)
		}
	}
}
