package allocator

import (
	"fmt"
	"math/big"
	"net"
	"net/netip"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// ipRange is one service CIDR: the addresses services may get, the network address (and an IPv4
// broadcast address) excluded, as kube's allocator excludes them.
type ipRange struct {
	prefix netip.Prefix
	family corev1.IPFamily
	first  *big.Int // the first usable address
	size   uint64   // usable addresses, capped at 2^62
	// cidrSize counts every address of the prefix (capped at 2^62), as kube's offset does.
	cidrSize uint64
}

// maxRangeSize bounds the addresses of a huge (IPv6) range that the allocator considers.
const maxRangeSize = 1 << 62

func newIPRange(cidr *net.IPNet) (ipRange, error) {
	p, err := netip.ParsePrefix(cidr.String())
	if err != nil {
		return ipRange{}, fmt.Errorf("parsing the service range %s: %w", cidr, err)
	}
	p = p.Masked()
	r := ipRange{prefix: p, family: corev1.IPv4Protocol}
	if p.Addr().Is6() {
		r.family = corev1.IPv6Protocol
	}
	hostBits := p.Addr().BitLen() - p.Bits()
	total := new(big.Int).Lsh(big.NewInt(1), uint(hostBits))
	usable := new(big.Int).Sub(total, big.NewInt(1)) // no network address
	if r.family == corev1.IPv4Protocol {
		usable.Sub(usable, big.NewInt(1)) // no broadcast address
	}
	if usable.Sign() <= 0 {
		return ipRange{}, fmt.Errorf("the service range %s has no address for services", cidr)
	}
	if usable.Cmp(big.NewInt(maxRangeSize)) > 0 {
		usable = big.NewInt(maxRangeSize)
	}
	if total.Cmp(big.NewInt(maxRangeSize)) > 0 {
		total = big.NewInt(maxRangeSize)
	}
	r.size, r.cidrSize = usable.Uint64(), total.Uint64()
	r.first = new(big.Int).Add(addrInt(p.Addr()), big.NewInt(1))
	return r, nil
}

func addrInt(a netip.Addr) *big.Int {
	b := a.AsSlice()
	return new(big.Int).SetBytes(b)
}

// at returns the address at offset i of the usable addresses.
func (r ipRange) at(i uint64) netip.Addr {
	n := new(big.Int).Add(r.first, new(big.Int).SetUint64(i))
	buf := make([]byte, r.prefix.Addr().BitLen()/8)
	n.FillBytes(buf)
	a, _ := netip.AddrFromSlice(buf)
	return a
}

// offset returns where a is among the usable addresses, and whether it is one.
func (r ipRange) offset(a netip.Addr) (uint64, bool) {
	if !r.prefix.Contains(a) {
		return 0, false
	}
	d := new(big.Int).Sub(addrInt(a), r.first)
	if d.Sign() < 0 || !d.IsUint64() || d.Uint64() >= r.size {
		return 0, false
	}
	return d.Uint64(), true
}

// dynamicOffset is kube's calculateRangeOffset: the addresses below it are left to services that ask
// for a particular IP, and allocation takes them only when the rest are gone.
func (r ipRange) dynamicOffset() uint64 {
	const minOffset, maxOffset, step = 16, 256, 16
	if r.cidrSize <= minOffset {
		return 0
	}
	return min(max(r.cidrSize/step, minOffset), maxOffset)
}

// portRange is the node port range: Base to Base+Size-1.
type portRange struct{ base, size int }

func newPortRange(r utilnet.PortRange) portRange { return portRange{base: r.Base, size: r.Size} }

func (r portRange) contains(p int) bool { return p >= r.base && p < r.base+r.size }

// String is kube's spelling in its messages: 30000-32767.
func (r portRange) String() string {
	return strconv.Itoa(r.base) + "-" + strconv.Itoa(r.base+r.size-1)
}

func (r portRange) dynamicOffset() uint64 {
	const minOffset, maxOffset, step = 16, 128, 32
	size := uint64(r.size)
	if size <= minOffset {
		return 0
	}
	return min(max(size/step, minOffset), maxOffset)
}
