package allocator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	netutils "k8s.io/utils/net"

	"github.com/apictl/apictl/pkg/storage"
)

// Where reservations live. A cluster IP is taken by the IPAddress object named by it, as kube's
// ipallocator takes it, so that the API shows every one and an IPAddress made by hand keeps its
// address from every Service. Node ports keep a key of their own under "ranges/", which no resource
// is stored under, so no watch cache or list sees them (kube keeps them in a bitmap there).
var ipPrefix = storage.ResourcePrefix(networkingv1.GroupName, "ipaddresses", "")

const (
	portPrefix = "ranges/servicenodeports/"
	// legacyIPPrefix is where apictl kept its cluster IPs before it made IPAddresses: Migrate moves
	// them.
	legacyIPPrefix = "ranges/serviceips/"
	// managedBy is the value of the IPAddresses' managed-by label: kube's ipallocator.ControllerName.
	managedBy = "ipallocator.k8s.io"
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

// owner is the value of a node port's reservation key, and what the IPAddress of a cluster IP says:
// the service that holds it, and since when. An IPAddress names its service by namespace and name
// only, so its owner has no UID.
type owner struct {
	Namespace  string    `json:"namespace"`
	Name       string    `json:"name"`
	UID        types.UID `json:"uid"`
	ReservedAt time.Time `json:"reservedAt"`
}

func ownerOf(s *corev1.Service, now time.Time) owner {
	return owner{Namespace: s.Namespace, Name: s.Name, UID: s.UID, ReservedAt: now.UTC()}
}

// ipKey is the key of ip's IPAddress, named by the canonical form of the address as kube names it
// (10.0.0.1, 2001:db8::1), whatever form the service spelled it in.
func ipKey(ip string) string {
	if parsed := netutils.ParseIPSloppy(ip); parsed != nil {
		ip = parsed.String()
	}
	return ipPrefix + ip
}

func portKey(p int32) string  { return portPrefix + strconv.Itoa(int(p)) }
func isIPKey(key string) bool { return strings.HasPrefix(key, ipPrefix) }

// encodeReservation is key's value for o: an IPAddress for a cluster IP, as kube's ipallocator
// makes it (its labels and its parentRef to the service), else o itself.
func encodeReservation(key string, o owner) ([]byte, error) {
	if !isIPKey(key) {
		return json.Marshal(o)
	}
	name := key[len(ipPrefix):]
	family := corev1.IPv4Protocol
	if netutils.IsIPv6String(name) {
		family = corev1.IPv6Protocol
	}
	return json.Marshal(&networkingv1.IPAddress{
		TypeMeta: metav1.TypeMeta{Kind: "IPAddress", APIVersion: networkingv1.SchemeGroupVersion.String()},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, UID: uuid.NewUUID(), CreationTimestamp: metav1.NewTime(o.ReservedAt).Rfc3339Copy(),
			Labels: map[string]string{networkingv1.LabelIPAddressFamily: string(family), networkingv1.LabelManagedBy: managedBy},
		},
		Spec: networkingv1.IPAddressSpec{ParentRef: &networkingv1.ParentReference{Resource: "services", Namespace: o.Namespace, Name: o.Name}},
	})
}

// decodeReservation reads the holder of key from its value. An IPAddress that the allocator did not
// make for a service (made by hand, or for another resource) has an owner without a name: nobody
// takes it over, and no service holds it.
func decodeReservation(key string, value []byte) owner {
	if !isIPKey(key) {
		var o owner
		_ = json.Unmarshal(value, &o)
		return o
	}
	var ip networkingv1.IPAddress
	if json.Unmarshal(value, &ip) != nil || ip.Labels[networkingv1.LabelManagedBy] != managedBy {
		return owner{}
	}
	ref := ip.Spec.ParentRef
	if ref == nil || ref.Group != "" || ref.Resource != "services" {
		return owner{}
	}
	return owner{Namespace: ref.Namespace, Name: ref.Name, ReservedAt: ip.CreationTimestamp.Time}
}

// holds reports whether held, a reservation's holder, is o's service: by UID where the reservation
// knows it, else by namespace and name.
func (o owner) holds(held owner) bool {
	if held.UID != "" {
		return held.UID == o.UID
	}
	return held.Name != "" && held.Namespace == o.Namespace && held.Name == o.Name
}

// reserve creates key for o. A key o already holds is fine (a retried write); a key held by a
// service that no longer holds the value, for longer than the grace period, is taken over; any other
// holder makes taken the error.
func (a *Allocator) reserve(ctx context.Context, key string, o owner, taken error) (created bool, err error) {
	value, err := encodeReservation(key, o)
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
		held := decodeReservation(key, current.Value)
		if o.holds(held) {
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
	return (held.UID != "" && svc.UID != held.UID) || !slices.Contains(heldKeys(&svc), key), nil
}

// release deletes key if o's service holds it. An IPAddress names its service without a UID: one
// that a service of the same name, made again since, holds is left to it.
func (a *Allocator) release(ctx context.Context, key string, o owner) error {
	if isIPKey(key) && o.Name != "" {
		kv, err := a.store.Get(ctx, storage.ObjectKey("", "services", o.Namespace, o.Name), storage.GetOptions{})
		if err != nil && !storage.IsNotFound(err) {
			return fmt.Errorf("reading the service %s/%s before releasing %s: %w", o.Namespace, o.Name, key, err)
		}
		if err == nil {
			if svc, err := decode(kv.Value); err == nil && svc.UID != o.UID && slices.Contains(heldKeys(svc), key) {
				return nil
			}
		}
	}
	_, err := a.store.Delete(ctx, key, func(kv storage.KeyValue) error {
		if !o.holds(decodeReservation(key, kv.Value)) {
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
		out[kv.Key] = decodeReservation(kv.Key, kv.Value)
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
