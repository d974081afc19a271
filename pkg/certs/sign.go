package certs

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"time"
)

// SignRequest is a PKCS#10 certificate request that a CA signs as it is, the way kube-controller-manager's
// CSR signers do: the subject and subject alternative names are the request's, the usages and
// validity are the signer's.
type SignRequest struct {
	// PEM is the request, one CERTIFICATE REQUEST block.
	PEM []byte
	// Usages are kube's key usage names (certificates.k8s.io/v1 KeyUsage: "digital signature",
	// "client auth", ...), which are also cfssl's.
	Usages []string
	// NotBefore and NotAfter bound the certificate; NotAfter is cut to the CA's own.
	NotBefore, NotAfter time.Time
}

// LoadCA reads a CA's certificate and key from their files, for signing.
func LoadCA(certFile, keyFile string) (*KeyPair, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, fmt.Errorf("reading the signing CA: %w", err)
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, fmt.Errorf("reading the signing CA's key: %w", err)
	}
	certs, err := parseCertsPEM(certPEM)
	if err != nil {
		return nil, fmt.Errorf("reading the signing CA %s: %w", certFile, err)
	}
	key, err := parseKeyPEM(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("reading the signing CA's key %s: %w", keyFile, err)
	}
	if !publicKeysEqual(certs[0].PublicKey, key.Public()) {
		return nil, fmt.Errorf("the key %s is not the key of the CA %s", keyFile, certFile)
	}
	return &KeyPair{Cert: certs[0], Key: key}, nil
}

// Sign has ca sign req through cfssl and returns the certificate as PEM.
func Sign(ca *KeyPair, req SignRequest) ([]byte, error) {
	if ca == nil || ca.Key == nil {
		return nil, errors.New("signing a certificate request: the CA has no key")
	}
	block, _ := pem.Decode(req.PEM)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, errors.New("signing a certificate request: it is not a PEM CERTIFICATE REQUEST")
	}
	cr, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("signing a certificate request: %w", err)
	}
	if err := cr.CheckSignature(); err != nil {
		return nil, fmt.Errorf("signing a certificate request: its signature does not verify: %w", err)
	}
	notAfter := req.NotAfter
	if !notAfter.Before(ca.Cert.NotAfter) {
		notAfter = ca.Cert.NotAfter
	}
	if !req.NotBefore.Before(notAfter) {
		return nil, fmt.Errorf("signing a certificate request: the CA %q expired at %s", ca.Cert.Subject.CommonName, FormatTime(ca.Cert.NotAfter))
	}
	cert, err := signRequest(ca, block.Bytes, cr, req.Usages, req.NotBefore, notAfter)
	if err != nil {
		return nil, err
	}
	return encodeCert(cert), nil
}
