package allocator

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/apictl/apictl/pkg/storage"
)

// MigrateResult counts what Migrate did.
type MigrateResult struct {
	// Moved are the old reservation keys whose IPAddress now exists; each key was deleted.
	Moved int
	// Made are IPAddresses made for cluster IPs that services hold without one.
	Made int
}

// Migrate brings a store written before cluster IPs were IPAddresses to the IPAddress form, once,
// before the allocator hands out anything: every reservation under the old prefix gets its IPAddress
// (parentRef to the service it named, created when it was reserved, so that one whose service never
// came is still reclaimed after the grace period) and the old key is then deleted, so that a data
// dir is migrated once and no key is left that nothing reads; then every service's cluster IPs get
// an IPAddress where they have none (a service the old allocator never saw, restored from a
// snapshot). An IPAddress that exists already is kept as it is. Replicas starting at once may both
// migrate: each step is a create or a delete that the other's makes harmless.
func (a *Allocator) Migrate(ctx context.Context) (MigrateResult, error) {
	var res MigrateResult
	legacy, err := a.store.List(ctx, legacyIPPrefix, storage.ListOptions{})
	if err != nil {
		return res, fmt.Errorf("listing the old cluster IP reservations: %w", err)
	}
	for _, kv := range legacy.Items {
		var o owner
		if err := json.Unmarshal(kv.Value, &o); err != nil || o.Name == "" {
			o = owner{ReservedAt: a.now()} // unreadable: kept taken, by nobody
		}
		if o.ReservedAt.IsZero() {
			o.ReservedAt = a.now()
		}
		ip := strings.TrimPrefix(kv.Key, legacyIPPrefix)
		if err := a.ensureIPAddress(ctx, ip, o); err != nil {
			return res, err
		}
		_, err := a.store.Delete(ctx, kv.Key, func(storage.KeyValue) error { return nil })
		if err != nil && !storage.IsNotFound(err) {
			return res, fmt.Errorf("deleting the old reservation %s: %w", kv.Key, err)
		}
		res.Moved++
	}
	services, err := a.store.List(ctx, storage.ResourcePrefix("", "services", ""), storage.ListOptions{})
	if err != nil {
		return res, fmt.Errorf("listing the services: %w", err)
	}
	for _, kv := range services.Items {
		svc, err := decode(kv.Value)
		if err != nil {
			return res, fmt.Errorf("%s: %w", kv.Key, err)
		}
		for _, key := range heldKeys(svc) {
			if !isIPKey(key) {
				continue
			}
			if _, err := a.store.Get(ctx, key, storage.GetOptions{}); err == nil {
				continue
			} else if !storage.IsNotFound(err) {
				return res, fmt.Errorf("reading %s: %w", key, err)
			}
			if err := a.ensureIPAddress(ctx, key[len(ipPrefix):], ownerOf(svc, a.now())); err != nil {
				return res, err
			}
			res.Made++
		}
	}
	return res, nil
}

// ensureIPAddress creates ip's IPAddress for o unless one exists.
func (a *Allocator) ensureIPAddress(ctx context.Context, ip string, o owner) error {
	key := ipKey(ip)
	value, err := encodeReservation(key, o)
	if err != nil {
		return fmt.Errorf("encoding the IPAddress %s: %w", ip, err)
	}
	if _, err := a.store.Create(ctx, key, value, 0); err != nil && !storage.IsAlreadyExists(err) {
		return fmt.Errorf("creating the IPAddress %s: %w", ip, err)
	}
	return nil
}
