package certs

import (
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"sync"
	"time"

	"github.com/cloudflare/cfssl/config"
	"github.com/cloudflare/cfssl/csr"
	"github.com/cloudflare/cfssl/initca"
	cflog "github.com/cloudflare/cfssl/log"
	"github.com/cloudflare/cfssl/signer"
	"github.com/cloudflare/cfssl/signer/local"
)

// This file is the only one that speaks cfssl: it turns apictl's requests into cfssl's and cfssl's
// PEM bytes back into parsed certificates.

var quietCFSSL sync.Once

// silenceCFSSL stops cfssl's package-global logger from printing [INFO] lines into apictl's output.
// Every function of this file calls it before cfssl; the Once orders the write before every read.
func silenceCFSSL() {
	quietCFSSL.Do(func() { cflog.Level = cflog.LevelFatal })
}

// caRequest is a self-signed CA to create.
type caRequest struct {
	commonName string
	validity   time.Duration
	key        crypto.Signer
}

// newCA self-signs a CA certificate for req.key. The CA may sign leaves only (path length 0).
func newCA(req caRequest) (*x509.Certificate, error) {
	silenceCFSSL()
	cr := &csr.CertificateRequest{
		CN: req.commonName,
		// cfssl takes a CA's lifetime from here, not from a signing profile.
		CA: &csr.CAConfig{Expiry: req.validity.String(), PathLenZero: true},
	}
	certPEM, _, err := initca.NewFromSigner(cr, req.key)
	if err != nil {
		return nil, fmt.Errorf("creating CA certificate %q: %w", req.commonName, err)
	}
	return parseSigned(certPEM)
}

// renewCA signs a new certificate for an existing CA: same subject, same key, so that everything the
// CA signed still verifies against it, and a new validity period.
func renewCA(ca *KeyPair, validity time.Duration) (*x509.Certificate, error) {
	silenceCFSSL()
	cr := csr.ExtractCertificateRequest(ca.Cert)
	cr.Hosts = nil
	cr.CA.Expiry = validity.String()
	certPEM, _, err := initca.NewFromSigner(cr, ca.Key)
	if err != nil {
		return nil, fmt.Errorf("renewing CA certificate %q: %w", ca.Cert.Subject.CommonName, err)
	}
	return parseSigned(certPEM)
}

// leafRequest is a certificate for key, to be signed by a CA.
type leafRequest struct {
	commonName    string
	organizations []string
	hosts         []string
	usage         usage
	notBefore     time.Time
	notAfter      time.Time
	key           crypto.Signer
}

// signLeaf has ca sign a certificate for req through a CSR, as cfssl's gencert does.
func signLeaf(ca *KeyPair, req leafRequest) (*x509.Certificate, error) {
	silenceCFSSL()
	cr := &csr.CertificateRequest{CN: req.commonName, Hosts: req.hosts}
	for _, o := range req.organizations {
		cr.Names = append(cr.Names, csr.Name{O: o})
	}
	csrPEM, err := csr.Generate(req.key, cr)
	if err != nil {
		return nil, fmt.Errorf("creating a certificate request for %q: %w", req.commonName, err)
	}
	usages := []string{"digital signature"}
	if usesKeyEncipherment(req.key.Public()) {
		usages = append(usages, "key encipherment")
	}
	if req.usage&usageServer != 0 {
		usages = append(usages, "server auth")
	}
	if req.usage&usageClient != 0 {
		usages = append(usages, "client auth")
	}
	policy := &config.Signing{Default: &config.SigningProfile{
		Usage: usages,
		// A Go-built profile needs Expiry itself: cfssl parses ExpiryString only when loading JSON.
		Expiry:       req.notAfter.Sub(req.notBefore),
		ExpiryString: req.notAfter.Sub(req.notBefore).String(),
	}}
	s, err := local.NewSigner(ca.Key, ca.Cert, signer.DefaultSigAlgo(ca.Key), policy)
	if err != nil {
		return nil, fmt.Errorf("preparing CA %q to sign: %w", ca.Cert.Subject.CommonName, err)
	}
	// Hosts, when not nil, replaces the CSR's SANs; give it always so that what is signed is exactly
	// what was asked for, and a client certificate gets no SANs at all.
	hosts := req.hosts
	if hosts == nil {
		hosts = []string{}
	}
	certPEM, err := s.Sign(signer.SignRequest{
		Request:   string(csrPEM),
		Hosts:     hosts,
		NotBefore: req.notBefore,
		NotAfter:  req.notAfter,
	})
	if err != nil {
		return nil, fmt.Errorf("signing the certificate for %q with CA %q: %w", req.commonName, ca.Cert.Subject.CommonName, err)
	}
	return parseSigned(certPEM)
}

func parseSigned(certPEM []byte) (*x509.Certificate, error) {
	certs, err := parseCertsPEM(certPEM)
	if err != nil {
		return nil, fmt.Errorf("reading the certificate cfssl signed: %w", err)
	}
	return certs[0], nil
}

// signRequest has ca sign a client's certificate request (der, parsed as cr) as it is: its subject
// and SANs, the usages given, no extension of the request's, not a CA.
func signRequest(ca *KeyPair, der []byte, cr *x509.CertificateRequest, usages []string, notBefore, notAfter time.Time) (*x509.Certificate, error) {
	silenceCFSSL()
	policy := &config.Signing{Default: &config.SigningProfile{
		Usage:        usages,
		Expiry:       notAfter.Sub(notBefore),
		ExpiryString: notAfter.Sub(notBefore).String(),
	}}
	s, err := local.NewSigner(ca.Key, ca.Cert, signer.DefaultSigAlgo(ca.Key), policy)
	if err != nil {
		return nil, fmt.Errorf("preparing CA %q to sign: %w", ca.Cert.Subject.CommonName, err)
	}
	// Hosts, when nil, keeps the request's DNS, IP, email and URI SANs, as kube's signers do.
	certPEM, err := s.Sign(signer.SignRequest{
		Request:   string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})),
		NotBefore: notBefore,
		NotAfter:  notAfter,
	})
	if err != nil {
		return nil, fmt.Errorf("signing the certificate of %q with CA %q: %w", cr.Subject.CommonName, ca.Cert.Subject.CommonName, err)
	}
	return parseSigned(certPEM)
}

// newRequest makes a PKCS#10 request (PEM) for key, with the user's name and groups as subject.
func newRequest(key crypto.Signer, commonName string, organizations []string) ([]byte, error) {
	silenceCFSSL()
	cr := &csr.CertificateRequest{CN: commonName}
	for _, o := range organizations {
		cr.Names = append(cr.Names, csr.Name{O: o})
	}
	pemBytes, err := csr.Generate(key, cr)
	if err != nil {
		return nil, fmt.Errorf("creating a certificate request for %q: %w", commonName, err)
	}
	return pemBytes, nil
}
