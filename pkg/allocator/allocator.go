package allocator

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/apictl/apictl/pkg/storage"
)

// DefaultGrace is how old a reservation must be before one whose service does not hold it is taken
// over: longer than a write between reserving and storing the service takes.
const DefaultGrace = time.Minute

// Config says where services' addresses and ports come from.
type Config struct {
	// ServiceCIDRs are --service-cluster-ip-range: one range, or two of different families; the first
	// is the family of services that do not ask for one.
	ServiceCIDRs []*net.IPNet
	// NodePorts is --service-node-port-range.
	NodePorts utilnet.PortRange
	// Grace is DefaultGrace when 0.
	Grace time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Allocator reserves cluster IPs and node ports in a Store.
type Allocator struct {
	// store is the raw store (not a watch cache): reservations and their services are read with
	// quorum.
	store    storage.Store
	ranges   map[corev1.IPFamily]ipRange
	primary  corev1.IPFamily
	ports    portRange
	grace    time.Duration
	now      func() time.Time
	maxTries int
}

// New returns an allocator over store for the ranges of cfg.
func New(store storage.Store, cfg Config) (*Allocator, error) {
	if len(cfg.ServiceCIDRs) == 0 || len(cfg.ServiceCIDRs) > 2 {
		return nil, fmt.Errorf("the service cluster IP range needs one or two CIDRs, not %d", len(cfg.ServiceCIDRs))
	}
	if cfg.NodePorts.Size <= 0 {
		return nil, errors.New("the service node port range is empty")
	}
	a := &Allocator{store: store, ranges: map[corev1.IPFamily]ipRange{}, ports: newPortRange(cfg.NodePorts),
		grace: cfg.Grace, now: cfg.Now, maxTries: 8}
	if a.grace <= 0 {
		a.grace = DefaultGrace
	}
	if a.now == nil {
		a.now = time.Now
	}
	for i, c := range cfg.ServiceCIDRs {
		r, err := newIPRange(c)
		if err != nil {
			return nil, err
		}
		if _, dup := a.ranges[r.family]; dup {
			return nil, fmt.Errorf("the service cluster IP ranges %v are of one IP family", cfg.ServiceCIDRs)
		}
		a.ranges[r.family] = r
		if i == 0 {
			a.primary = r.family
		}
	}
	return a, nil
}

// reserveIP reserves a particular IP of family for o; it must be in a ready range.
func (a *Allocator) reserveIP(ctx context.Context, fam corev1.IPFamily, ip string, o owner) (created bool, err error) {
	addr, err := netip.ParseAddr(ip)
	if err != nil {
		return false, fmt.Errorf("parsing the service IP %q: %w", ip, err)
	}
	ranges, err := a.readyRanges(ctx, fam)
	if err != nil {
		return false, err
	}
	if !slices.ContainsFunc(ranges, func(r ipRange) bool { _, ok := r.offset(addr.Unmap()); return ok }) {
		return false, errNotInRange
	}
	return a.reserve(ctx, ipKey(ip), o, errIPAllocated)
}

// reserveNextIP reserves a free IP of family for o from the first ready range that has one: a
// random one above the range's dynamic offset, else below it.
func (a *Allocator) reserveNextIP(ctx context.Context, fam corev1.IPFamily, o owner) (string, error) {
	ranges, err := a.readyRanges(ctx, fam)
	if err != nil {
		return "", err
	}
	for _, r := range ranges {
		ip, err := a.reserveNextIPIn(ctx, r, o)
		if !errors.Is(err, errFull) {
			return ip, err
		}
	}
	return "", errFull
}

func (a *Allocator) reserveNextIPIn(ctx context.Context, r ipRange, o owner) (string, error) {
	for range a.maxTries {
		taken, err := a.reservedSet(ctx, ipPrefix)
		if err != nil {
			return "", err
		}
		i, ok := pickFree(r.size, r.dynamicOffset(), func(i uint64) bool { _, t := taken[ipKey(r.at(i).String())]; return t })
		if !ok {
			if reclaimed, err := a.reclaimStale(ctx, taken, func(key string) bool { return a.keyInRange(key, r) }); err != nil || !reclaimed {
				if err != nil {
					return "", err
				}
				return "", errFull
			}
			continue
		}
		ip := r.at(i).String()
		created, err := a.reserve(ctx, ipKey(ip), o, errIPAllocated)
		switch {
		case errors.Is(err, errIPAllocated):
			continue // another replica was quicker
		case err != nil:
			return "", err
		case !created:
			continue // ours already: for another of our families, so not new
		}
		return ip, nil
	}
	return "", errFull
}

func (a *Allocator) keyInRange(key string, r ipRange) bool {
	if !isIPKey(key) {
		return false
	}
	addr, err := netip.ParseAddr(key[len(ipPrefix):])
	if err != nil {
		return false
	}
	_, ok := r.offset(addr)
	return ok
}

// reserveNodePort reserves a particular node port for o.
func (a *Allocator) reserveNodePort(ctx context.Context, port int32, o owner) (bool, error) {
	if !a.ports.contains(int(port)) {
		return false, &refusal{fmt.Sprintf("provided port is not in the valid range. The range of valid ports is %s", a.ports)}
	}
	return a.reserve(ctx, portKey(port), o, errPortAllocated)
}

// reserveNextNodePort reserves a free node port for o.
func (a *Allocator) reserveNextNodePort(ctx context.Context, o owner) (int32, error) {
	for range a.maxTries {
		taken, err := a.reservedSet(ctx, portPrefix)
		if err != nil {
			return 0, err
		}
		at := func(i uint64) int32 { return int32(a.ports.base + int(i)) }
		i, ok := pickFree(uint64(a.ports.size), a.ports.dynamicOffset(), func(i uint64) bool { _, t := taken[portKey(at(i))]; return t })
		if !ok {
			reclaimed, err := a.reclaimStale(ctx, taken, func(string) bool { return true })
			if err != nil {
				return 0, err
			}
			if !reclaimed {
				return 0, errFull
			}
			continue
		}
		created, err := a.reserve(ctx, portKey(at(i)), o, errPortAllocated)
		switch {
		case errors.Is(err, errPortAllocated):
			continue
		case err != nil:
			return 0, err
		case !created:
			continue
		}
		return at(i), nil
	}
	return 0, errFull
}

// reclaimStale deletes the stale reservations among taken that match, for a full range; it reports
// whether any went.
func (a *Allocator) reclaimStale(ctx context.Context, taken map[string]owner, match func(string) bool) (bool, error) {
	reclaimed := false
	for key, o := range taken {
		if !match(key) {
			continue
		}
		stale, err := a.stale(ctx, key, o)
		if err != nil {
			return reclaimed, err
		}
		if stale {
			if err := a.release(ctx, key, o); err != nil {
				return reclaimed, err
			}
			reclaimed = true
		}
	}
	return reclaimed, nil
}

// pickFree returns a random free index of [0, size): from [offset, size) when one is free there, else
// from [0, offset). Small ranges are searched whole; a huge one is sampled.
func pickFree(size, offset uint64, taken func(uint64) bool) (uint64, bool) {
	for _, band := range [][2]uint64{{offset, size}, {0, offset}} {
		lo, hi := band[0], band[1]
		if hi <= lo {
			continue
		}
		n := hi - lo
		start := rand.Uint64N(n)
		if n > 1<<20 {
			for range 1024 {
				if i := lo + rand.Uint64N(n); !taken(i) {
					return i, true
				}
			}
		}
		for j := range min(n, 1<<20) {
			if i := lo + (start+j)%n; !taken(i) {
				return i, true
			}
		}
	}
	return 0, false
}
