package cacher

import (
	"context"
	"time"

	"github.com/apictl/apictl/pkg/storage"
)

// Writes go to the wrapped store; the cache learns of them through its watch, like of anyone else's.

// Create implements storage.Store by passing the call to the wrapped store.
func (c *Cacher) Create(ctx context.Context, key string, value []byte, ttl time.Duration) (storage.KeyValue, error) {
	return c.store.Create(ctx, key, value, ttl)
}

// GuaranteedUpdate implements storage.Store by passing the call to the wrapped store.
func (c *Cacher) GuaranteedUpdate(ctx context.Context, key string, tryUpdate storage.UpdateFunc, opts storage.UpdateOptions) (storage.KeyValue, error) {
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
