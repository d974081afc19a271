package certs

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
)

const (
	pemCertificate = "CERTIFICATE"
	pemPrivateKey  = "PRIVATE KEY"
)

// encodeCert returns a certificate as PEM.
func encodeCert(cert *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: pemCertificate, Bytes: cert.Raw})
}

// encodeKey returns a private key as PKCS#8 "PRIVATE KEY" PEM: one label for every algorithm, read by
// openssl, Go's crypto/tls, kubectl and etcd alike (cfssl's "Ed25519 PRIVATE KEY" label is not).
func encodeKey(key crypto.Signer) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encoding a %s private key: %w", algorithmOf(key.Public()), err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: pemPrivateKey, Bytes: der}), nil
}

// errNoPEM and its kin describe what is wrong with a file's contents; callers add the file's path.
var (
	errNoPEM        = errors.New("holds no PEM data")
	errTruncatedPEM = errors.New("holds a truncated or damaged PEM block (no matching -----END line)")
)

// pemBlocks splits data into PEM blocks, rejecting anything that is not PEM and a block cut short.
func pemBlocks(data []byte) ([]*pem.Block, error) {
	var blocks []*pem.Block
	rest := data
	for {
		block, r := pem.Decode(rest)
		if block == nil {
			break
		}
		blocks = append(blocks, block)
		rest = r
	}
	switch {
	case bytes.Contains(rest, []byte("-----BEGIN")):
		return nil, errTruncatedPEM
	case len(blocks) == 0:
		return nil, errNoPEM
	}
	return blocks, nil
}

// parseCertsPEM parses every certificate in data, leaf first as TLS sends them.
func parseCertsPEM(data []byte) ([]*x509.Certificate, error) {
	blocks, err := pemBlocks(data)
	if err != nil {
		return nil, err
	}
	var certs []*x509.Certificate
	for _, b := range blocks {
		if b.Type != pemCertificate {
			if isKeyType(b.Type) {
				return nil, fmt.Errorf("holds a %s where a certificate belongs: certificates go in .crt files, keys in .key files", b.Type)
			}
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("holds a damaged certificate: %w", err)
		}
		certs = append(certs, c)
	}
	if len(certs) == 0 {
		return nil, fmt.Errorf("holds no CERTIFICATE block (found %s)", blockTypes(blocks))
	}
	return certs, nil
}

// parseKeyPEM parses the one private key in data, in any of the encodings openssl and cfssl write.
func parseKeyPEM(data []byte) (crypto.Signer, error) {
	blocks, err := pemBlocks(data)
	if err != nil {
		return nil, err
	}
	for _, b := range blocks {
		if !isKeyType(b.Type) {
			continue
		}
		var key any
		switch b.Type {
		case "ENCRYPTED PRIVATE KEY":
			return nil, errors.New("holds an encrypted private key: apictl needs it unencrypted (openssl pkey -in KEY -out KEY)")
		case "RSA PRIVATE KEY":
			key, err = x509.ParsePKCS1PrivateKey(b.Bytes)
		case "EC PRIVATE KEY":
			key, err = x509.ParseECPrivateKey(b.Bytes)
		default: // PRIVATE KEY, and cfssl's "Ed25519 PRIVATE KEY" around a PKCS#8 body
			key, err = x509.ParsePKCS8PrivateKey(b.Bytes)
		}
		if err != nil {
			return nil, fmt.Errorf("holds a damaged %s: %w", b.Type, err)
		}
		switch k := key.(type) {
		case *rsa.PrivateKey, *ecdsa.PrivateKey, ed25519.PrivateKey:
			return k.(crypto.Signer), nil
		}
		return nil, fmt.Errorf("holds a %T, which apictl cannot sign with", key)
	}
	return nil, fmt.Errorf("holds no private key (found %s)", blockTypes(blocks))
}

func isKeyType(t string) bool {
	return strings.HasSuffix(t, pemPrivateKey)
}

func blockTypes(blocks []*pem.Block) string {
	types := make([]string, len(blocks))
	for i, block := range blocks {
		types[i] = block.Type
	}
	return strings.Join(types, ", ")
}

// keyMatches reports whether key is the private half of the certificate's public key.
func keyMatches(cert *x509.Certificate, key crypto.Signer) bool {
	pub, ok := key.Public().(interface{ Equal(crypto.PublicKey) bool })
	return ok && pub.Equal(cert.PublicKey)
}
