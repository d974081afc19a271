package certs

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"time"
)

// DefaultInspectTimeout bounds connecting to an endpoint and its TLS handshake.
const DefaultInspectTimeout = 10 * time.Second

// InspectOptions say how to reach an endpoint and what to verify against.
type InspectOptions struct {
	// Timeout bounds the connection and handshake to an https:// target.
	Timeout time.Duration
	// CAFile, when set, is a PEM bundle to verify the chain against (and, for an endpoint, its host
	// name). Without it the chain is read, not verified.
	CAFile string
	// Now is the time validity is judged at; zero means time.Now.
	Now time.Time
}

// Inspection is one certificate read from a file or a TLS endpoint.
type Inspection struct {
	// Source is the file or URL the certificate came from.
	Source string `json:"source"`
	Info
	// ChainLength is how many certificates the file or the server's chain holds; Info is the first.
	ChainLength     int    `json:"chainLength"`
	Residual        string `json:"residual"`
	ResidualSeconds int64  `json:"residualSeconds"`
	// Verification is "not checked" without a CA file, else "ok" or what failed; Verified says the
	// same as a boolean when a check ran.
	Verification string `json:"verification"`
	Verified     *bool  `json:"verified,omitempty"`
}

// Inspect reads the first certificate of a PEM file or of the chain an https:// endpoint presents.
func Inspect(ctx context.Context, target string, opts InspectOptions) (*Inspection, error) {
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	var roots *x509.CertPool
	if opts.CAFile != "" {
		data, err := os.ReadFile(opts.CAFile)
		if err != nil {
			return nil, fmt.Errorf("reading --ca-file %s: %w", opts.CAFile, unwrapPath(err))
		}
		cas, err := parseCertsPEM(data)
		if err != nil {
			return nil, fmt.Errorf("--ca-file %s %w", opts.CAFile, err)
		}
		roots = x509.NewCertPool()
		for _, ca := range cas {
			roots.AddCert(ca)
		}
	}
	var chain []*x509.Certificate
	var host string
	if strings.Contains(target, "://") {
		u, err := url.Parse(target)
		if err != nil || u.Scheme != "https" || u.Hostname() == "" {
			return nil, fmt.Errorf("%q is not an https:// URL with a host: give a file or a URL like https://127.0.0.1:6443", target)
		}
		host = u.Hostname()
		if chain, err = fetchChain(ctx, u, opts.Timeout); err != nil {
			return nil, err
		}
	} else {
		data, err := os.ReadFile(target)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", target, unwrapPath(err))
		}
		if chain, err = parseCertsPEM(data); err != nil {
			return nil, fmt.Errorf("%s %w", target, err)
		}
	}
	leaf := chain[0]
	residual := leaf.NotAfter.Sub(opts.Now)
	in := &Inspection{
		Source: target, Info: Describe(leaf), ChainLength: len(chain),
		Residual: FormatResidual(residual), ResidualSeconds: int64(residual / time.Second),
		Verification: "not checked (give --ca-file to verify)",
	}
	if roots != nil {
		err := verifyChain(chain, roots, host, opts.Now)
		ok := err == nil
		in.Verified = &ok
		in.Verification = "ok, against " + opts.CAFile
		if err != nil {
			in.Verification = "failed against " + opts.CAFile + ": " + err.Error()
		}
	}
	return in, nil
}

// fetchChain connects to u and returns the chain its server presents, without verifying it: the
// point is to read a certificate, including one nothing trusts yet.
func fetchChain(ctx context.Context, u *url.URL, timeout time.Duration) ([]*x509.Certificate, error) {
	if timeout <= 0 {
		return nil, flagErrorf("timeout", timeout.String(), "must be greater than zero, like 10s")
	}
	port := u.Port()
	if port == "" {
		port = "443"
	}
	addr := net.JoinHostPort(u.Hostname(), port)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cfg := &tls.Config{
		InsecureSkipVerify: true, //nolint:gosec // reading, not trusting: verification is separate and reported
		MinVersion:         tls.VersionTLS12,
	}
	if net.ParseIP(u.Hostname()) == nil {
		cfg.ServerName = u.Hostname()
	}
	conn, err := (&tls.Dialer{Config: cfg}).DialContext(ctx, "tcp", addr)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("connecting to %s: no TLS handshake within --timeout %s", addr, timeout)
		}
		return nil, fmt.Errorf("connecting to %s: %w", addr, err)
	}
	defer conn.Close()
	chain := conn.(*tls.Conn).ConnectionState().PeerCertificates
	if len(chain) == 0 {
		return nil, fmt.Errorf("connecting to %s: the server presented no certificate", addr)
	}
	return chain, nil
}

// verifyChain checks the chain as a TLS client would: to a root in roots, valid at now, for host
// when one is given.
func verifyChain(chain []*x509.Certificate, roots *x509.CertPool, host string, now time.Time) error {
	intermediates := x509.NewCertPool()
	for _, c := range chain[1:] {
		intermediates.AddCert(c)
	}
	_, err := chain[0].Verify(x509.VerifyOptions{
		Roots: roots, Intermediates: intermediates, DNSName: host, CurrentTime: now,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny},
	})
	return err
}
