package etcd3

import (
	"context"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// maxKeysPerLease bounds how many keys share one lease, so that revoking or expiring it stays cheap.
const maxKeysPerLease = 1000

// leaseManager hands out leases for keys written with a TTL. Granting a lease per key would create as
// many leases as Events; instead keys written close together with similar TTLs share one, granted a
// little longer than asked (5% of the TTL, at most the reuse duration). A key therefore lives between
// its TTL and TTL plus that margin, as in kube-apiserver.
type leaseManager struct {
	lease clientv3.Lease
	reuse time.Duration

	mu       sync.Mutex
	id       clientv3.LeaseID
	expires  time.Time
	attached int
}

func newLeaseManager(lease clientv3.Lease, reuse time.Duration) *leaseManager {
	return &leaseManager{lease: lease, reuse: reuse}
}

// get returns a lease that lives at least ttl (rounded up to whole seconds) and at most ttl plus the
// reuse margin.
func (m *leaseManager) get(ctx context.Context, ttl time.Duration) (clientv3.LeaseID, error) {
	seconds := int64((ttl + time.Second - 1) / time.Second)
	margin := min(seconds/20, int64(m.reuse/time.Second))
	now := time.Now()
	want := now.Add(time.Duration(seconds) * time.Second)

	// The lock is held across Grant so that a burst of writes shares one new lease instead of each
	// granting its own.
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.id != clientv3.NoLease && m.attached < maxKeysPerLease &&
		m.expires.After(want) && !m.expires.After(want.Add(time.Duration(margin)*time.Second)) {
		m.attached++
		return m.id, nil
	}
	resp, err := m.lease.Grant(ctx, seconds+margin)
	if err != nil {
		return clientv3.NoLease, err
	}
	m.id = resp.ID
	m.expires = now.Add(time.Duration(resp.TTL) * time.Second)
	m.attached = 1
	return m.id, nil
}

// updateOptions returns the put options of an update: a lease that lives at least ttl when ttl > 0
// (the lease, to forget if etcd says it is gone), else none, keeping whatever lease the key has so
// that an update does not make an expiring key permanent.
func (m *leaseManager) updateOptions(ctx context.Context, ttl time.Duration) ([]clientv3.OpOption, clientv3.LeaseID, error) {
	if ttl <= 0 {
		return []clientv3.OpOption{clientv3.WithIgnoreLease()}, clientv3.NoLease, nil
	}
	lease, err := m.get(ctx, ttl)
	if err != nil {
		return nil, clientv3.NoLease, err
	}
	return []clientv3.OpOption{clientv3.WithLease(lease)}, lease, nil
}

// forget drops the current lease after etcd said it no longer exists (revoked by someone else).
func (m *leaseManager) forget(id clientv3.LeaseID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.id == id {
		m.id = clientv3.NoLease
	}
}
