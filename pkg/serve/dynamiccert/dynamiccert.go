// Package dynamiccert holds TLS material read from files and re-read when the files change, so that
// renewed certificates take effect without a restart. Files are compared by content on a short poll:
// that catches renames, copies and editors alike, and a half-written pair (a new certificate with the
// old key) simply fails to load and is retried, while the last good material stays in use.
package dynamiccert

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"
)

// DefaultInterval is how often files are compared.
const DefaultInterval = time.Second

// ServingCert is a certificate and key pair for tls.Config.GetCertificate.
type ServingCert struct {
	certFile, keyFile string
	log               *slog.Logger

	mu      sync.RWMutex
	cert    *tls.Certificate
	certPEM []byte
	keyPEM  []byte
	// warned is the last expiry warning logged for the current pair, so each is logged once.
	warned expiryState
}

// expiryState is how close the current pair is to its NotAfter.
type expiryState int

const (
	expiryFar expiryState = iota
	expirySoon
	expiryPast
)

// expiryWarning is how long before its NotAfter a serving certificate is said to expire soon.
const expiryWarning = 30 * 24 * time.Hour

// NewServingCert loads the pair; it fails if the files do not hold a matching pair.
func NewServingCert(certFile, keyFile string, log *slog.Logger) (*ServingCert, error) {
	c := &ServingCert{certFile: certFile, keyFile: keyFile, log: log}
	if _, err := c.reload(); err != nil {
		return nil, err
	}
	c.warnExpiry(time.Now())
	return c, nil
}

// GetCertificate returns the current pair.
func (c *ServingCert) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.cert, nil
}

// Current returns the leaf of the current pair.
func (c *ServingCert) Current() *x509.Certificate {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.cert.Leaf
}

// reload reads the files and swaps the pair in if they changed; it reports whether it did.
func (c *ServingCert) reload() (bool, error) {
	certPEM, err := os.ReadFile(c.certFile)
	if err != nil {
		return false, fmt.Errorf("reading serving certificate: %w", err)
	}
	keyPEM, err := os.ReadFile(c.keyFile)
	if err != nil {
		return false, fmt.Errorf("reading serving key: %w", err)
	}
	c.mu.RLock()
	same := bytes.Equal(certPEM, c.certPEM) && bytes.Equal(keyPEM, c.keyPEM)
	c.mu.RUnlock()
	if same {
		return false, nil
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return false, fmt.Errorf("loading serving pair %s and %s: %w", c.certFile, c.keyFile, err)
	}
	c.mu.Lock()
	c.cert, c.certPEM, c.keyPEM, c.warned = &pair, certPEM, keyPEM, expiryFar
	c.mu.Unlock()
	return true, nil
}

// Run re-reads the files every interval until ctx ends, logging each reload and each failure.
func (c *ServingCert) Run(ctx context.Context, interval time.Duration) {
	poll(ctx, interval, func() {
		changed, err := c.reload()
		switch {
		case err != nil:
			c.log.Warn("keeping the current serving certificate: the files on disk do not load", "err", err)
		case changed:
			leaf := c.Current()
			c.log.Info("reloaded the serving certificate from disk", "file", c.certFile,
				"subject", leaf.Subject.String(), "notAfter", leaf.NotAfter.UTC().Format(time.RFC3339), "dnsNames", leaf.DNSNames)
		}
		c.warnExpiry(time.Now())
	})
}

// warnExpiry logs, once per pair, that the serving certificate expires within expiryWarning or has
// expired: clients refuse an expired one, and nothing else would say why.
func (c *ServingCert) warnExpiry(now time.Time) {
	c.mu.Lock()
	leaf := c.cert.Leaf
	state := expiryFar
	switch {
	case leaf == nil:
	case !now.Before(leaf.NotAfter):
		state = expiryPast
	case leaf.NotAfter.Sub(now) < expiryWarning:
		state = expirySoon
	}
	warn := state > c.warned
	if warn {
		c.warned = state
	}
	c.mu.Unlock()
	if !warn || c.log == nil {
		return
	}
	notAfter := leaf.NotAfter.UTC().Format(time.RFC3339)
	if state == expiryPast {
		c.log.Warn("the serving certificate has expired: clients refuse the connection; renew it (apictl certs renew apiserver) and the server picks it up without a restart",
			"file", c.certFile, "notAfter", notAfter)
		return
	}
	c.log.Warn("the serving certificate expires soon: renew it (apictl certs renew apiserver) and the server picks it up without a restart",
		"file", c.certFile, "notAfter", notAfter)
}

// CABundle is a pool of CA certificates, for verifying client certificates.
type CABundle struct {
	file string
	log  *slog.Logger

	mu   sync.RWMutex
	pool *x509.CertPool
	pem  []byte
}

// NewCABundle loads the bundle; it fails if the file holds no certificate.
func NewCABundle(file string, log *slog.Logger) (*CABundle, error) {
	b := &CABundle{file: file, log: log}
	if _, err := b.reload(); err != nil {
		return nil, err
	}
	return b, nil
}

// Pool returns the current pool.
func (b *CABundle) Pool() *x509.CertPool {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.pool
}

// PEM returns the current bundle as the file held it when it last loaded: what the server trusts,
// for publishing (the extension-apiserver-authentication ConfigMap). Do not modify it.
func (b *CABundle) PEM() []byte {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.pem
}

func (b *CABundle) reload() (bool, error) {
	data, err := os.ReadFile(b.file)
	if err != nil {
		return false, fmt.Errorf("reading client CA bundle: %w", err)
	}
	b.mu.RLock()
	same := bytes.Equal(data, b.pem)
	b.mu.RUnlock()
	if same {
		return false, nil
	}
	pool, err := parsePool(data)
	if err != nil {
		return false, fmt.Errorf("loading client CA bundle %s: %w", b.file, err)
	}
	b.mu.Lock()
	b.pool, b.pem = pool, data
	b.mu.Unlock()
	return true, nil
}

// Run re-reads the file every interval until ctx ends.
func (b *CABundle) Run(ctx context.Context, interval time.Duration) {
	poll(ctx, interval, func() {
		changed, err := b.reload()
		switch {
		case err != nil:
			b.log.Warn("keeping the current client CA bundle: the file on disk does not load", "err", err)
		case changed:
			b.log.Info("reloaded the client CA bundle from disk", "file", b.file)
		}
	})
}

func parsePool(data []byte) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	n := 0
	for block, rest := pem.Decode(data); block != nil; block, rest = pem.Decode(rest) {
		if block.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("parsing a certificate: %w", err)
		}
		pool.AddCert(cert)
		n++
	}
	if n == 0 {
		return nil, errors.New("no PEM certificate found")
	}
	return pool, nil
}

func poll(ctx context.Context, interval time.Duration, tick func()) {
	if interval <= 0 {
		interval = DefaultInterval
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			tick()
		}
	}
}
