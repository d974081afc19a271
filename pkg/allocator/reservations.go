package allocator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/apictl/apictl/pkg/storage"
)

// Storage prefixes of the reservations. No resource is stored under "ranges/", so no watch cache or
// list sees them.
const (
	ipPrefix   = "ranges/serviceips/"
	portPrefix = "ranges/servicenodeports/"
)

// refusal is an allocation the request cannot have (taken, out of range), as opposed to a failure
// of storage; its message is kube's allocator's.
type refusal struct{ msg string }

func (r *refusal) Error() string { return r.msg }

// Errors of a reservation, with the words of kube's allocators.
var (
	errIPAllocated   = &refusal{"provided IP is already allocated"}
	errPortAllocated = &refusal{"provided port is already allocated"}
	errNotInRange    = &refusal{"the provided network does not match the current range"}
	errFull          = errors.New("range is full")
	errNotOwner      = errors.New("the reservation belongs to another service")
)

// isRefusal reports whether err is the request's fault.
func isRefusal(err error) bool {
	var r *refusal
	return errors.As(err, &r)
}

// owner is the value of a reservation key: the service that holds it, and since when.
type owner struct {
	Namespace  string    `json:"namespace"`
	Name       string    `json:"name"`
	UID        types.UID `json:"uid"`
	ReservedAt time.Time `json:"reservedAt"`
}

func ownerOf(s *corev1.Service, now time.Time) owner {
	return owner{Namespace: s.Namespace, Name: s.Name, UID: s.UID, ReservedAt: now.UTC()}
}

func ipKey(ip string) string  { return ipPrefix + ip }
func portKey(p int32) string  { return portPrefix + strconv.Itoa(int(p)) }
func isIPKey(key string) bool { return len(key) > len(ipPrefix) && key[:len(ipPrefix)] == ipPrefix }

// reserve creates key for o. A key o already holds is fine (a retried write); a key held by a
// service that no longer holds the value, for longer than the grace period, is taken over; any other
// holder makes taken the error.
func (a *Allocator) reserve(ctx context.Context, key string, o owner, taken error) (created bool, err error) {
	value, err := json.Marshal(o)
	if err != nil {
		return false, fmt.Errorf("encoding the reservation %s: %w", key, err)
	}
	for range 3 {
		_, err = a.store.Create(ctx, key, value, 0)
		if err == nil {
			return true, nil
		}
		if !storage.IsAlreadyExists(err) {
			return false, fmt.Errorf("reserving %s: %w", key, err)
		}
		current, err := a.store.Get(ctx, key, storage.GetOptions{})
		if storage.IsNotFound(err) {
			continue // released meanwhile: try again
		}
		if err != nil {
			return false, fmt.Errorf("reading the reservation %s: %w", key, err)
		}
		var held owner
		if json.Unmarshal(current.Value, &held) == nil && held.UID == o.UID {
			return false, nil
		}
		stale, err := a.stale(ctx, key, held)
		if err != nil {
			return false, err
		}
		if !stale {
			return false, taken
		}
		// Taken over only as read: a concurrent taker wins or loses as a whole.
		_, err = a.store.Delete(ctx, key, func(kv storage.KeyValue) error {
			if kv.ModRevision != current.ModRevision {
				return taken
			}
			return nil
		})
		if err != nil && !storage.IsNotFound(err) {
			if errors.Is(err, taken) {
				return false, taken
			}
			return false, fmt.Errorf("reclaiming the reservation %s: %w", key, err)
		}
	}
	return false, taken
}

// stale reports whether a reservation outlived its purpose: older than the grace period, and its
// service is gone, was recreated, or does not hold the value.
func (a *Allocator) stale(ctx context.Context, key string, held owner) (bool, error) {
	if held.Name == "" || a.now().Sub(held.ReservedAt) < a.grace {
		return false, nil
	}
	kv, err := a.store.Get(ctx, storage.ObjectKey("", "services", held.Namespace, held.Name), storage.GetOptions{})
	if storage.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading the service %s/%s that holds %s: %w", held.Namespace, held.Name, key, err)
	}
	var svc corev1.Service
	if err := json.Unmarshal(kv.Value, &svc); err != nil {
		return false, fmt.Errorf("decoding the service %s/%s: %w", held.Namespace, held.Name, err)
	}
	return svc.UID != held.UID || !slices.Contains(heldKeys(&svc), key), nil
}

// release deletes key if uid holds it.
func (a *Allocator) release(ctx context.Context, key string, uid types.UID) error {
	_, err := a.store.Delete(ctx, key, func(kv storage.KeyValue) error {
		var held owner
		if json.Unmarshal(kv.Value, &held) == nil && held.UID != uid {
			return errNotOwner
		}
		return nil
	})
	if err == nil || storage.IsNotFound(err) || errors.Is(err, errNotOwner) {
		return nil
	}
	return fmt.Errorf("releasing %s: %w", key, err)
}

// reservedSet lists the reservations under prefix.
func (a *Allocator) reservedSet(ctx context.Context, prefix string) (map[string]owner, error) {
	res, err := a.store.List(ctx, prefix, storage.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing the reservations %s: %w", prefix, err)
	}
	out := make(map[string]owner, len(res.Items))
	for _, kv := range res.Items {
		var o owner
		_ = json.Unmarshal(kv.Value, &o)
		out[kv.Key] = o
	}
	return out, nil
}

// heldKeys are the reservation keys a service's spec holds: its cluster IPs, node ports and health
// check node port.
func heldKeys(s *corev1.Service) []string {
	var keys []string
	if s.Spec.Type != corev1.ServiceTypeExternalName {
		for _, ip := range s.Spec.ClusterIPs {
			if ip != "" && ip != corev1.ClusterIPNone {
				keys = append(keys, ipKey(ip))
			}
		}
	}
	for _, p := range s.Spec.Ports {
		if p.NodePort != 0 {
			keys = append(keys, portKey(p.NodePort))
		}
	}
	if s.Spec.HealthCheckNodePort != 0 {
		keys = append(keys, portKey(s.Spec.HealthCheckNodePort))
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}
