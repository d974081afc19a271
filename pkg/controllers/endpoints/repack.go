//lint:file-ignore SA1019 core v1 Endpoints are deprecated in kube, which still serves them and keeps them with its controllers: so does apictl.

// Ported from k8s.io/kubernetes v1.37.2 pkg/api/v1/endpoints/util.go (RepackSubsets, SortSubsets)
// and pkg/util/hash/hash.go (DeepHashObject).

package endpoints

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"hash"
	"hash/fnv"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/dump"
)

// RepackSubsets is kube's canonical form of an Endpoints' subsets: every address once per port, an
// address both ready and not ready counted not ready, addresses with the same set of ports gathered in
// one subset, and everything sorted. Two Endpoints that mean the same compare equal once repacked.
func RepackSubsets(subsets []corev1.EndpointSubset) []corev1.EndpointSubset {
	// An address's identity is its IP and its target's UID.
	allAddrs := map[addressKey]*corev1.EndpointAddress{}
	portToAddrReady := map[corev1.EndpointPort]addressSet{}
	for i := range subsets {
		if len(subsets[i].Ports) == 0 {
			// A headless service's subsets have no ports: a sentinel keeps their addresses.
			mapAddressesByPort(&subsets[i], corev1.EndpointPort{Port: -1}, allAddrs, portToAddrReady)
			continue
		}
		for _, port := range subsets[i].Ports {
			mapAddressesByPort(&subsets[i], port, allAddrs, portToAddrReady)
		}
	}
	// Ports whose address sets are the same share a subset.
	addrsByKey := map[string]addressSet{}
	portsByKey := map[string][]corev1.EndpointPort{}
	for port, addrs := range portToAddrReady {
		key := hashAddresses(addrs)
		addrsByKey[key] = addrs
		if port.Port > 0 {
			portsByKey[key] = append(portsByKey[key], port)
		} else if _, found := portsByKey[key]; !found {
			portsByKey[key] = nil
		}
	}
	final := []corev1.EndpointSubset{}
	for key, ports := range portsByKey {
		var ready, notReady []corev1.EndpointAddress
		for addr, isReady := range addrsByKey[key] {
			if isReady {
				ready = append(ready, *addr)
			} else {
				notReady = append(notReady, *addr)
			}
		}
		final = append(final, corev1.EndpointSubset{Addresses: ready, NotReadyAddresses: notReady, Ports: ports})
	}
	return SortSubsets(final)
}

type addressKey struct {
	ip  string
	uid types.UID
}

func mapAddressesByPort(subset *corev1.EndpointSubset, port corev1.EndpointPort, allAddrs map[addressKey]*corev1.EndpointAddress,
	portToAddrReady map[corev1.EndpointPort]addressSet) {
	for k := range subset.Addresses {
		mapAddressByPort(&subset.Addresses[k], port, true, allAddrs, portToAddrReady)
	}
	for k := range subset.NotReadyAddresses {
		mapAddressByPort(&subset.NotReadyAddresses[k], port, false, allAddrs, portToAddrReady)
	}
}

func mapAddressByPort(addr *corev1.EndpointAddress, port corev1.EndpointPort, ready bool, allAddrs map[addressKey]*corev1.EndpointAddress,
	portToAddrReady map[corev1.EndpointPort]addressSet) {
	key := addressKey{ip: addr.IP}
	if addr.TargetRef != nil {
		key.uid = addr.TargetRef.UID
	}
	existing := allAddrs[key]
	if existing == nil {
		existing = new(corev1.EndpointAddress)
		*existing = *addr
		allAddrs[key] = existing
	}
	if _, found := portToAddrReady[port]; !found {
		portToAddrReady[port] = addressSet{}
	}
	// Not ready trumps ready.
	if wasReady, found := portToAddrReady[port][existing]; !found || wasReady {
		portToAddrReady[port][existing] = ready
	}
}

type addressSet map[*corev1.EndpointAddress]bool

type addrReady struct {
	addr  *corev1.EndpointAddress
	ready bool
}

func hashAddresses(addrs addressSet) string {
	list := make([]addrReady, 0, len(addrs))
	for k, ready := range addrs {
		list = append(list, addrReady{k, ready})
	}
	slices.SortFunc(list, func(a, b addrReady) int { return compareAddress(a.addr, b.addr) })
	return hex.EncodeToString(hashObject(fnv.New128a(), list))
}

// compareAddress orders addresses by IP, then by target UID, an address without a target first.
func compareAddress(a, b *corev1.EndpointAddress) int {
	if c := bytes.Compare([]byte(a.IP), []byte(b.IP)); c != 0 {
		return c
	}
	switch {
	case a.TargetRef == nil && b.TargetRef == nil:
		return 0
	case a.TargetRef == nil:
		return -1
	case b.TargetRef == nil:
		return 1
	}
	return bytes.Compare([]byte(a.TargetRef.UID), []byte(b.TargetRef.UID))
}

// SortSubsets sorts the addresses and ports of each subset, and the subsets, into kube's order.
func SortSubsets(subsets []corev1.EndpointSubset) []corev1.EndpointSubset {
	for i := range subsets {
		ss := &subsets[i]
		slices.SortStableFunc(ss.Addresses, func(a, b corev1.EndpointAddress) int { return compareAddress(&a, &b) })
		slices.SortStableFunc(ss.NotReadyAddresses, func(a, b corev1.EndpointAddress) int { return compareAddress(&a, &b) })
		slices.SortStableFunc(ss.Ports, compareByHash[corev1.EndpointPort])
	}
	slices.SortStableFunc(subsets, compareByHash[corev1.EndpointSubset])
	return subsets
}

func compareByHash[T any](a, b T) int {
	return bytes.Compare(hashObject(fnv.New128a(), a), hashObject(fnv.New128a(), b))
}

// hashObject is kube's DeepHashObject: the hash of obj's pointer-following dump.
func hashObject(hasher hash.Hash, obj any) []byte {
	hasher.Reset()
	fmt.Fprintf(hasher, "%v", dump.ForHash(obj))
	return hasher.Sum(nil)
}
