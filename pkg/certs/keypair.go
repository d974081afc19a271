package certs

import (
	"crypto"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// KeyPair is a certificate with its private key.
type KeyPair struct {
	Cert *x509.Certificate
	// Key is nil for a CA whose key is not in the cert dir (an external CA): it can be checked
	// against, not signed with.
	Key crypto.Signer
}

// CertPEM returns the certificate as PEM.
func (kp *KeyPair) CertPEM() []byte { return encodeCert(kp.Cert) }

// KeyPEM returns the private key as PKCS#8 PEM.
func (kp *KeyPair) KeyPEM() ([]byte, error) {
	if kp.Key == nil {
		return nil, errors.New("no private key")
	}
	return encodeKey(kp.Key)
}

// CertPath is where the certificate called name (a file stem such as "apiserver" or "etcd/ca")
// lives in dir.
func CertPath(dir, name string) string { return filepath.Join(dir, filepath.FromSlash(name)+".crt") }

// KeyPath is where the private key called name lives in dir.
func KeyPath(dir, name string) string { return filepath.Join(dir, filepath.FromSlash(name)+".key") }

// stored is what the cert dir holds for one name: raw bytes and, when they parse, their meaning.
// A missing file leaves its fields nil; a file that does not parse sets its error, which names it.
type stored struct {
	name              string
	certPath, keyPath string
	certPEM, keyPEM   []byte
	cert              *x509.Certificate
	key               crypto.Signer
	certErr, keyErr   error
}

// loadStored reads the pair called name. Only an unreadable file is an error here; what the files
// hold is judged by the caller.
func loadStored(dir, name string) (*stored, error) {
	s := &stored{name: name, certPath: CertPath(dir, name), keyPath: KeyPath(dir, name)}
	var err error
	if s.certPEM, err = readOptional(s.certPath); err != nil {
		return nil, err
	}
	if s.keyPEM, err = readOptional(s.keyPath); err != nil {
		return nil, err
	}
	if s.certPEM != nil {
		certs, err := parseCertsPEM(s.certPEM)
		if err != nil {
			s.certErr = fmt.Errorf("%s %w", s.certPath, err)
		} else {
			s.cert = certs[0]
		}
	}
	if s.keyPEM != nil {
		if s.key, err = parseKeyPEM(s.keyPEM); err != nil {
			s.key = nil
			s.keyErr = fmt.Errorf("%s %w", s.keyPath, err)
		}
	}
	return s, nil
}

// readOptional returns a file's contents, or nil when it does not exist.
func readOptional(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return data, nil
}
