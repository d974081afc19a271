package allocator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/apictl/apictl/pkg/storage"
	"github.com/apictl/apictl/pkg/storage/cacher"
)

// Wrap returns services, the Store the REST handlers keep Services in, with allocation around its
// writes: a created or updated service is given its families, cluster IPs and node ports before it is
// written, and what a write or delete let go is released after it. Reads and watches pass through.
func (a *Allocator) Wrap(services storage.Store, logger *slog.Logger) storage.Store {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &serviceStore{Store: services, a: a, logger: logger}
	if events, ok := services.(eventSource); ok {
		return &cachedServiceStore{serviceStore: s, events: events}
	}
	return s
}

// eventSource is a watch cache's watch, which the handlers' watches need of a store.
type eventSource interface {
	WatchEvents(ctx context.Context, prefix string, opts cacher.WatchOptions) (*cacher.Watcher, error)
}

// cachedServiceStore is a serviceStore over a watch cache, whose watches it passes on.
type cachedServiceStore struct {
	*serviceStore
	events eventSource
}

// WatchEvents is the watch cache's.
func (s *cachedServiceStore) WatchEvents(ctx context.Context, prefix string, opts cacher.WatchOptions) (*cacher.Watcher, error) {
	return s.events.WatchEvents(ctx, prefix, opts)
}

// releaseTimeout bounds the releases that follow a write.
const releaseTimeout = 30 * time.Second

type serviceStore struct {
	storage.Store
	a      *Allocator
	logger *slog.Logger
}

var _ storage.Store = (*serviceStore)(nil)

// Create allocates, then writes; a failed write releases what was allocated.
func (s *serviceStore) Create(ctx context.Context, key string, value []byte, ttl time.Duration) (storage.KeyValue, error) {
	svc, err := decode(value)
	if err != nil {
		return storage.KeyValue{}, err
	}
	var t txn
	if err := s.a.allocate(ctx, svc, nil, &t); err != nil {
		s.undo(ctx, &t, holder(svc))
		return storage.KeyValue{}, err
	}
	if value, err = json.Marshal(svc); err != nil {
		s.undo(ctx, &t, holder(svc))
		return storage.KeyValue{}, fmt.Errorf("encoding the service %s: %w", key, err)
	}
	kv, err := s.Store.Create(ctx, key, value, ttl)
	if err != nil {
		s.undo(ctx, &t, holder(svc))
	}
	return kv, err
}

// GuaranteedUpdate allocates on every attempt what the new spec needs and the current one does not
// hold; once the write is in, what neither the write nor the stored object needs is released: the
// reservations of discarded attempts and what the last stored object held but the written one does
// not.
func (s *serviceStore) GuaranteedUpdate(ctx context.Context, key string, tryUpdate storage.UpdateFunc, opts storage.UpdateOptions) (storage.KeyValue, error) {
	var t txn
	var last *corev1.Service // the stored object the written value was computed from
	var o owner
	wrapped := func(current storage.KeyValue) ([]byte, error) {
		next, err := tryUpdate(current)
		if err != nil || bytes.Equal(next, current.Value) {
			return next, err
		}
		old, err := decode(current.Value)
		if err != nil {
			return nil, err
		}
		svc, err := decode(next)
		if err != nil {
			return nil, err
		}
		last, o = old, holder(old)
		if !old.DeletionTimestamp.IsZero() && equality.Semantic.DeepEqual(old.Spec, svc.Spec) {
			return next, nil
		}
		before := svc.Spec.DeepCopy()
		if err := s.a.allocate(ctx, svc, old, &t); err != nil {
			return nil, err
		}
		if equality.Semantic.DeepEqual(before, &svc.Spec) {
			return next, nil // nothing allocated: keep the bytes as the handler made them
		}
		return json.Marshal(svc)
	}
	kv, err := s.Store.GuaranteedUpdate(ctx, key, wrapped, opts)
	if err != nil {
		s.undo(ctx, &t, o)
		return kv, err
	}
	if last == nil {
		return kv, nil // no change was written
	}
	stored, err := decode(kv.Value)
	if err != nil {
		return kv, nil // written: a release left undone is reclaimed later
	}
	keep := heldKeys(stored)
	var release []string
	for _, k := range append(heldKeys(last), t.created...) {
		if !slices.Contains(keep, k) && !slices.Contains(release, k) {
			release = append(release, k)
		}
	}
	s.releaseAll(ctx, release, holder(stored))
	return kv, nil
}

// Delete releases what the deleted service held.
func (s *serviceStore) Delete(ctx context.Context, key string, check storage.CheckFunc) (storage.KeyValue, error) {
	kv, err := s.Store.Delete(ctx, key, check)
	if err != nil {
		return kv, err
	}
	if svc, err := decode(kv.Value); err == nil {
		s.releaseAll(ctx, heldKeys(svc), holder(svc))
	}
	return kv, nil
}

// holder is the owner a release of svc's reservations checks for.
func holder(svc *corev1.Service) owner {
	return owner{Namespace: svc.Namespace, Name: svc.Name, UID: svc.UID}
}

// undo releases the reservations of a write that did not happen.
func (s *serviceStore) undo(ctx context.Context, t *txn, o owner) {
	s.releaseAll(ctx, t.created, o)
}

// releaseAll deletes the reservations keys that o holds. It goes on when the request's context has
// ended (a client that went away after its write), bounded by releaseTimeout, so that nothing is left
// reserved for nobody.
func (s *serviceStore) releaseAll(ctx context.Context, keys []string, o owner) {
	if len(keys) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
	defer cancel()
	var errs []error
	for _, k := range keys {
		errs = append(errs, s.a.release(ctx, k, o))
	}
	if err := errors.Join(errs...); err != nil {
		// Left for the next allocator that needs the value: it reclaims reservations nobody holds.
		s.logger.Warn("releasing service reservations", "err", err)
	}
}

func decode(value []byte) (*corev1.Service, error) {
	var svc corev1.Service
	if err := json.Unmarshal(value, &svc); err != nil {
		return nil, fmt.Errorf("decoding a service: %w", err)
	}
	return &svc, nil
}
