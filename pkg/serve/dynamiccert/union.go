package dynamiccert

import (
	"crypto/x509"
	"slices"
	"sync"
)

// CAUnion is the union of several CA bundles, in order, as the TLS handshake advertises them: kube
// lists the subjects of --client-ca-file and then of --requestheader-client-ca-file as the acceptable
// client certificate authorities, so that a client picks a certificate one of them signed. It follows
// the bundles' reloads. Verifying a certificate stays each authenticator's job, against its own
// bundle, so that a proxy's certificate never authenticates as itself.
type CAUnion struct {
	bundles []*CABundle

	mu    sync.Mutex
	pools []*x509.CertPool // the bundles' pools the union was built from
	union *x509.CertPool
}

// NewCAUnion returns the union of the non-nil bundles, or nil when there are none.
func NewCAUnion(bundles ...*CABundle) *CAUnion {
	u := &CAUnion{}
	for _, b := range bundles {
		if b != nil {
			u.bundles = append(u.bundles, b)
		}
	}
	if len(u.bundles) == 0 {
		return nil
	}
	return u
}

// Pool returns a pool of every bundle's certificates, rebuilt when a bundle has changed.
func (u *CAUnion) Pool() *x509.CertPool {
	pools := make([]*x509.CertPool, len(u.bundles))
	for i, b := range u.bundles {
		pools[i] = b.Pool()
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.union != nil && slices.Equal(pools, u.pools) {
		return u.union
	}
	union := x509.NewCertPool()
	for _, b := range u.bundles {
		b.mu.RLock()
		data := b.pem
		b.mu.RUnlock()
		// The bundle parsed these bytes already; a bundle that fails now is skipped, not fatal.
		union.AppendCertsFromPEM(data)
	}
	u.pools, u.union = pools, union
	return union
}
