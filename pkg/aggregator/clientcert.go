package aggregator

import (
	"crypto/tls"
	"fmt"
	"os"
	"sync"
	"time"

	"k8s.io/client-go/transport"
)

// clientCert is the front-proxy client pair, read from its files and read again when they change
// (`apictl certs renew` replaces them in place), checked at each TLS handshake with the backends.
type clientCert struct {
	certFile, keyFile string

	mu      sync.Mutex
	modCert time.Time
	modKey  time.Time
	current *tls.Certificate
}

// newCertHolder returns the holder of the pair in certFile and keyFile; empty names present no
// certificate, as kube's aggregator does without --proxy-client-cert-file.
func newCertHolder(certFile, keyFile string) *transport.GetCertHolder {
	if certFile == "" || keyFile == "" {
		return nil
	}
	c := &clientCert{certFile: certFile, keyFile: keyFile}
	return &transport.GetCertHolder{GetCert: c.get}
}

func (c *clientCert) get() (*tls.Certificate, error) {
	certInfo, err := os.Stat(c.certFile)
	if err != nil {
		return nil, fmt.Errorf("reading the front-proxy client certificate: %w", err)
	}
	keyInfo, err := os.Stat(c.keyFile)
	if err != nil {
		return nil, fmt.Errorf("reading the front-proxy client key: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.current != nil && certInfo.ModTime().Equal(c.modCert) && keyInfo.ModTime().Equal(c.modKey) {
		return c.current, nil
	}
	pair, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
	if err != nil {
		if c.current != nil {
			return c.current, nil // a pair half-written by a renewal: keep the last good one
		}
		return nil, fmt.Errorf("loading the front-proxy client pair %s, %s: %w", c.certFile, c.keyFile, err)
	}
	c.current, c.modCert, c.modKey = &pair, certInfo.ModTime(), keyInfo.ModTime()
	return c.current, nil
}
