// Package namespacedefault keeps one named object in every active namespace, driven by the watch
// caches of namespaces and of the object's resource: whenever a namespace becomes active, or the
// object is deleted or changed, the namespace is reconciled. It is the shared engine of kube's
// serviceaccounts controller (the "default" ServiceAccount) and root-ca-cert-publisher (the
// kube-root-ca.crt ConfigMap).
package namespacedefault

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/apictl/apictl/pkg/storage"
)

// Reconcile brings the object of namespace ns into shape: current is its stored JSON, nil when it
// does not exist. It is called only for active namespaces.
type Reconcile func(ctx context.Context, ns string, current []byte) error

// Config says which object to keep and how.
type Config struct {
	// Namespaces is the store of namespaces (a watch cache).
	Namespaces storage.Store
	// Objects is the store of the object's resource (a watch cache); Resource its plural, in the
	// core group.
	Objects  storage.Store
	Resource string
	// Name is the object's name in every namespace.
	Name      string
	Reconcile Reconcile
	Logger    *slog.Logger
	// Retry is how long a failed reconcile waits before trying again; 0 means one second.
	Retry time.Duration
}

// Controller runs one Config.
type Controller struct {
	cfg Config

	mu      sync.Mutex
	active  map[string]bool   // namespaces in phase Active
	objects map[string][]byte // the object's JSON by namespace
	dirty   map[string]bool
	wake    chan struct{}
}

// New returns a controller for cfg.
func New(cfg Config) *Controller {
	if cfg.Retry == 0 {
		cfg.Retry = time.Second
	}
	return &Controller{cfg: cfg, active: map[string]bool{}, objects: map[string][]byte{}, dirty: map[string]bool{}, wake: make(chan struct{}, 1)}
}

// always adapts a handler that never stops Reflect by itself: ctx does.
func always(h func(reset bool, items []storage.KeyValue, deleted bool)) storage.ReflectHandler {
	return func(reset bool, items []storage.KeyValue, deleted bool) bool {
		h(reset, items, deleted)
		return true
	}
}

// Run reconciles until ctx ends, and returns once its goroutines have stopped.
func (c *Controller) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		storage.Reflect(ctx, c.cfg.Namespaces, storage.ResourcePrefix("", "namespaces", ""), always(c.onNamespaces), c.cfg.Logger)
	}()
	go func() {
		defer wg.Done()
		storage.Reflect(ctx, c.cfg.Objects, storage.ResourcePrefix("", c.cfg.Resource, ""), always(c.onObjects), c.cfg.Logger)
	}()
	defer wg.Wait()
	var retry *time.Timer
	defer func() {
		if retry != nil {
			retry.Stop()
		}
	}()
	for {
		var retryC <-chan time.Time
		if retry != nil {
			retryC = retry.C
		}
		select {
		case <-ctx.Done():
			return
		case <-c.wake:
		case <-retryC:
			retry = nil
		}
		if failed := c.work(ctx); failed && retry == nil && ctx.Err() == nil {
			retry = time.NewTimer(c.cfg.Retry)
		}
	}
}

// work reconciles every dirty namespace; it reports whether one failed (and is dirty again).
func (c *Controller) work(ctx context.Context) bool {
	c.mu.Lock()
	todo := c.dirty
	c.dirty = map[string]bool{}
	c.mu.Unlock()
	failed := false
	for ns := range todo {
		c.mu.Lock()
		active, current := c.active[ns], c.objects[ns]
		c.mu.Unlock()
		if !active {
			continue
		}
		if err := c.cfg.Reconcile(ctx, ns, current); err != nil {
			if ctx.Err() != nil {
				return false
			}
			c.cfg.Logger.Warn("reconciling failed; retrying", "namespace", ns, "resource", c.cfg.Resource, "name", c.cfg.Name, "err", err)
			c.mu.Lock()
			c.dirty[ns] = true
			c.mu.Unlock()
			failed = true
		}
	}
	return failed
}

func (c *Controller) markLocked(ns string) {
	c.dirty[ns] = true
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// onNamespaces records namespaces' phases; a namespace that is (or becomes) active is reconciled.
func (c *Controller) onNamespaces(reset bool, items []storage.KeyValue, deleted bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if reset {
		c.active = map[string]bool{}
	}
	for _, kv := range items {
		name := kv.Key[strings.LastIndexByte(kv.Key, '/')+1:]
		if deleted {
			delete(c.active, name)
			continue
		}
		var ns corev1.Namespace
		if err := json.Unmarshal(kv.Value, &ns); err != nil {
			c.cfg.Logger.Warn("a stored namespace does not decode", "key", kv.Key, "err", err)
			continue
		}
		active := ns.DeletionTimestamp == nil && ns.Status.Phase != corev1.NamespaceTerminating
		c.active[name] = active
		if active {
			c.markLocked(name)
		}
	}
	if reset {
		for ns := range c.active {
			c.markLocked(ns)
		}
	}
}

// onObjects records the named object of each namespace; a change or a delete reconciles its
// namespace.
func (c *Controller) onObjects(reset bool, items []storage.KeyValue, deleted bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if reset {
		old := c.objects
		c.objects = map[string][]byte{}
		for ns := range old {
			c.markLocked(ns) // it may be gone now
		}
	}
	for _, kv := range items {
		// Keys are <resource>/<namespace>/<name>.
		parts := strings.Split(kv.Key, "/")
		if len(parts) < 3 || parts[len(parts)-1] != c.cfg.Name {
			continue
		}
		ns := parts[len(parts)-2]
		if deleted {
			delete(c.objects, ns)
		} else {
			c.objects[ns] = kv.Value
		}
		c.markLocked(ns)
	}
}
