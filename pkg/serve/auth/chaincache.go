package auth

import (
	"crypto/sha256"
	"crypto/x509"
	"errors"
	"fmt"
	"sync"
	"time"
)

// chainCache verifies presented client certificate chains against a CA bundle and remembers the
// outcome. A verified chain is remembered until its first certificate expires or the bundle changes:
// verifying an ECDSA chain costs more than the rest of a cached GET, and every request of an HTTP/2
// connection (every request of a client, with keep-alive) presents the same chain. A chain that no
// authority of the bundle signed is remembered too, until the bundle changes: with front-proxy
// authentication configured, every request with an ordinary client certificate is first tried, and
// refused, as a proxy's. The zero value is ready; do not copy it.
type chainCache struct {
	mu      sync.Mutex
	entries map[[sha256.Size]byte]verifiedChain
}

// verifiedChain is what verifying a chain established, and for how long.
type verifiedChain struct {
	roots  *x509.CertPool // the bundle it was verified against
	expiry time.Time      // the earliest NotAfter in the chain; for a refusal, the leaf's
	// err is why the bundle refused the chain; nil when it verified.
	err    error
	name   string
	groups []string
}

// maxVerifiedChains bounds the memory of verified chains: past it the cache starts over, which costs
// one verification per client.
const maxVerifiedChains = 4096

// verify returns what verifying certs against roots for client authentication establishes, from
// the cache when it can.
func (c *chainCache) verify(certs []*x509.Certificate, roots *x509.CertPool) (verifiedChain, error) {
	key := chainKey(certs)
	now := time.Now()
	c.mu.Lock()
	v, ok := c.entries[key]
	c.mu.Unlock()
	if ok && v.roots == roots && now.Before(v.expiry) {
		return v, v.err
	}
	v = verifyChain(certs, roots)
	if v.err != nil && !errors.As(v.err, new(x509.UnknownAuthorityError)) {
		// Other refusals (expired, not yet valid, wrong usage) depend on the clock or are rare: verify
		// them afresh.
		return v, v.err
	}
	c.mu.Lock()
	if c.entries == nil || len(c.entries) >= maxVerifiedChains {
		c.entries = make(map[[sha256.Size]byte]verifiedChain)
	}
	c.entries[key] = v
	c.mu.Unlock()
	return v, v.err
}

// chainKey identifies a presented chain by its certificates' bytes.
func chainKey(certs []*x509.Certificate) [sha256.Size]byte {
	h := sha256.New()
	for _, c := range certs {
		h.Write(c.Raw)
	}
	var key [sha256.Size]byte
	h.Sum(key[:0])
	return key
}

// verifyChain verifies a presented chain against roots for client authentication.
func verifyChain(certs []*x509.Certificate, roots *x509.CertPool) verifiedChain {
	leaf := certs[0]
	intermediates := x509.NewCertPool()
	for _, c := range certs[1:] {
		intermediates.AddCert(c)
	}
	v := verifiedChain{roots: roots, expiry: leaf.NotAfter, name: leaf.Subject.CommonName, groups: leaf.Subject.Organization}
	chains, err := leaf.Verify(x509.VerifyOptions{
		Roots:         roots,
		Intermediates: intermediates,
		KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		v.err = fmt.Errorf("verifying client certificate %q: %w", leaf.Subject.CommonName, err)
		return v
	}
	for _, chain := range chains {
		for _, c := range chain {
			if c.NotAfter.Before(v.expiry) {
				v.expiry = c.NotAfter
			}
		}
	}
	return v
}
