//lint:file-ignore SA1019 core v1 Endpoints are deprecated in kube, which still serves them and keeps them with its controllers: so does apictl.

package kubernetesservice

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apictl/apictl/pkg/storage"
)

// LeasePrefix is where StoreLeases keeps the replicas' addresses, under the store's --etcd-prefix:
// kube-apiserver's /registry/masterleases/.
const LeasePrefix = "masterleases/"

// StoreLeases keeps every replica's address as an etcd key with a TTL, as kube's storageLeases does:
// a replica renews its key at every reconcile, and one that stops (or dies) drops out when its key
// expires, with no one having to notice. The value is kube's: an Endpoints object naming the
// address, so that a kube-apiserver on the same etcd reads the same list.
//
// A key with a TTL fits better than a coordination Lease: the Lease would be visible to users, and
// a dead replica's Lease would stay until someone deleted it, where the key expires by itself.
type StoreLeases struct {
	Store storage.Store
	// TTL is how long a key outlives its last renewal (kube's 15 s).
	TTL time.Duration
}

var _ Leases = StoreLeases{}

// List returns the addresses of the live replicas.
func (l StoreLeases) List(ctx context.Context) ([]string, error) {
	res, err := l.Store.List(ctx, LeasePrefix, storage.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing the API servers' leases: %w", err)
	}
	ips := make([]string, 0, len(res.Items))
	for _, kv := range res.Items {
		var ep corev1.Endpoints
		if err := json.Unmarshal(kv.Value, &ep); err != nil {
			return nil, fmt.Errorf("reading the API server lease %s: %w", kv.Key, err)
		}
		if len(ep.Subsets) > 0 && len(ep.Subsets[0].Addresses) > 0 && ep.Subsets[0].Addresses[0].IP != "" {
			ips = append(ips, ep.Subsets[0].Addresses[0].IP)
		}
	}
	return ips, nil
}

// Update writes ip's key, or renews its TTL.
func (l StoreLeases) Update(ctx context.Context, ip string) error {
	key := LeasePrefix + ip
	// etcd renews a key's lease only when the key is written: kube bumps the generation so that
	// every renewal is a write.
	next := func(generation int64) ([]byte, error) {
		return json.Marshal(&corev1.Endpoints{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Endpoints"},
			ObjectMeta: metav1.ObjectMeta{Name: ip, Generation: generation},
			Subsets:    []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: ip}}}},
		})
	}
	for range 3 {
		_, err := l.Store.GuaranteedUpdate(ctx, key, func(cur storage.KeyValue) ([]byte, error) {
			var ep corev1.Endpoints
			if err := json.Unmarshal(cur.Value, &ep); err != nil {
				return nil, fmt.Errorf("reading the API server lease %s: %w", key, err)
			}
			return next(ep.Generation + 1)
		}, storage.UpdateOptions{TTL: l.TTL})
		if !storage.IsNotFound(err) {
			return wrapLease("renewing", ip, err)
		}
		value, err := next(1)
		if err != nil {
			return wrapLease("writing", ip, err)
		}
		// Another writer of the same address (a replica restarted on it) may have created it meanwhile.
		if _, err = l.Store.Create(ctx, key, value, l.TTL); !storage.IsAlreadyExists(err) {
			return wrapLease("writing", ip, err)
		}
	}
	return fmt.Errorf("writing the API server lease of %s: it kept appearing and disappearing", ip)
}

// Remove deletes ip's key; a missing key is no error.
func (l StoreLeases) Remove(ctx context.Context, ip string) error {
	_, err := l.Store.Delete(ctx, LeasePrefix+ip, nil)
	if storage.IsNotFound(err) {
		return nil
	}
	return wrapLease("removing", ip, err)
}

func wrapLease(doing, ip string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s the API server lease of %s: %w", doing, ip, err)
}
