package certs

import (
	"context"
	"fmt"
	"time"
)

// PeerFiles are the files an embedded etcd member uses on its peer connections, both ends: its pair
// and the cluster's etcd CA, the only CA a peer's certificate may chain to.
type PeerFiles struct {
	CAFile, CertFile, KeyFile string
}

// EnsureEtcdPeer loads or creates the etcd CA in dir (a cluster's members share it: a joiner gets
// it from the member it joins through) and keeps or signs the member's peer certificate
// (server and client auth) for localhost, loopback, the host name and hosts, which must include
// the address its peers dial. Files are written atomically, as by EnsureServing.
func EnsureEtcdPeer(ctx context.Context, dir string, hosts []string) (PeerFiles, error) {
	if err := checkDir(dir); err != nil {
		return PeerFiles{}, err
	}
	extra, err := normalizeHosts("advertise-address", hosts)
	if err != nil {
		return PeerFiles{}, err
	}
	all := []string{"localhost"}
	if h := machineHostname(); h != "" {
		all = appendHost(all, h)
	}
	all = unionHosts(unionHosts(all, []string{"127.0.0.1", "::1"}), extra)
	r := newRun(dir, time.Now())
	ca, err := r.ensureCA(ctx, NameEtcdCA, DefaultKeyAlgorithm, DefaultCAValidity, false)
	if err != nil {
		return PeerFiles{}, fmt.Errorf("the etcd CA: %w", err)
	}
	var prof profile
	for _, p := range profiles {
		if p.name == NameEtcdPeer {
			prof = p
		}
	}
	if _, err := r.ensureLeaf(ctx, prof, ca, all, leafOptions{
		validity: DefaultValidity, alg: DefaultKeyAlgorithm,
		repair: "remove it to let apictl serve sign a new one",
	}); err != nil {
		return PeerFiles{}, err
	}
	if err := r.files.commit(ctx, atomicWriter{}); err != nil {
		return PeerFiles{}, err
	}
	return PeerFiles{CAFile: CertPath(dir, NameEtcdCA), CertFile: CertPath(dir, NameEtcdPeer), KeyFile: KeyPath(dir, NameEtcdPeer)}, nil
}
