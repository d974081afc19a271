package cacher

import (
	"context"
	"strings"
	"time"

	"github.com/apictl/apictl/pkg/storage"
)

// Writes go to the wrapped store; the cache learns of them through its watch, like of anyone else's.

// Create implements storage.Store by passing the call to the wrapped store.
func (c *Cacher) Create(ctx context.Context, key string, value []byte, ttl time.Duration) (storage.KeyValue, error) {
	return c.store.Create(ctx, key, value, ttl)
}

// GuaranteedUpdate implements storage.Store by passing the call to the wrapped store, with the cached
// value of the key as the value to try first (storage.UpdateOptions.Cached), as kube's watch cache
// does: an update then usually costs etcd one transaction instead of a read and a transaction.
func (c *Cacher) GuaranteedUpdate(ctx context.Context, key string, tryUpdate storage.UpdateFunc, opts storage.UpdateOptions) (storage.KeyValue, error) {
	if opts.Cached == nil && strings.HasPrefix(key, c.prefix) && c.serving() {
		c.mu.RLock()
		v := c.index.get(key)
		c.mu.RUnlock()
		if v != nil {
			kv := v.kv
			opts.Cached = &kv
		}
	}
	return c.store.GuaranteedUpdate(ctx, key, tryUpdate, opts)
}

// Delete implements storage.Store by passing the call to the wrapped store.
func (c *Cacher) Delete(ctx context.Context, key string, check storage.CheckFunc) (storage.KeyValue, error) {
	return c.store.Delete(ctx, key, check)
}

// CurrentRevision implements storage.Store by passing the call to the wrapped store.
func (c *Cacher) CurrentRevision(ctx context.Context) (int64, error) {
	return c.store.CurrentRevision(ctx)
}

// Healthy implements storage.Store by passing the call to the wrapped store.
func (c *Cacher) Healthy(ctx context.Context) error {
	return c.store.Healthy(ctx)
}

// Close implements storage.Store and does nothing: the wrapped store is shared by the cachers of
// every resource and closed by its owner, and a cacher stops when the context given to Run ends.
func (c *Cacher) Close() error { return nil }
