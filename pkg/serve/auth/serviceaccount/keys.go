// Package serviceaccount issues and verifies kube's bound service-account tokens: JWTs signed with
// the service-account key, carrying the "kubernetes.io" private claim, verified against the
// configured public keys, issuers and audiences and (with lookup) against the ServiceAccount they
// name. It also produces the OIDC discovery documents relying parties verify the tokens with.
package serviceaccount

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"os"

	jose "github.com/go-jose/go-jose/v4"
)

// KeyID is kube's key ID of a public key: the unpadded base64url SHA-256 of its PKIX DER. Tokens
// carry it as "kid", and /openid/v1/jwks lists each key under it.
func KeyID(pub crypto.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", fmt.Errorf("serializing the public key to DER: %w", err)
	}
	sum := sha256.Sum256(der)
	return base64.RawURLEncoding.EncodeToString(sum[:]), nil
}

// Algorithm is the JWS algorithm kube signs with for a key: RS256 for RSA, ES256/384/512 by
// ECDSA curve. Other keys cannot sign or verify service-account tokens.
func Algorithm(pub crypto.PublicKey) (jose.SignatureAlgorithm, error) {
	switch k := pub.(type) {
	case *rsa.PublicKey:
		return jose.RS256, nil
	case *ecdsa.PublicKey:
		switch k.Curve {
		case elliptic.P256():
			return jose.ES256, nil
		case elliptic.P384():
			return jose.ES384, nil
		case elliptic.P521():
			return jose.ES512, nil
		}
		return "", errors.New("unknown private key curve, must be 256, 384, or 521")
	}
	return "", fmt.Errorf("unsupported key type %T: service-account keys must be RSA or ECDSA", pub)
}

// PublicKey is a verification key with its key ID.
type PublicKey struct {
	KeyID string
	Key   crypto.PublicKey
}

// NewPublicKey computes a key's ID, checking that kube could use it.
func NewPublicKey(pub crypto.PublicKey) (PublicKey, error) {
	if _, err := Algorithm(pub); err != nil {
		return PublicKey{}, err
	}
	id, err := KeyID(pub)
	if err != nil {
		return PublicKey{}, err
	}
	return PublicKey{KeyID: id, Key: pub}, nil
}

// LoadPublicKeys reads the RSA and ECDSA keys of a PEM file, as --service-account-key-file takes
// it: public keys, and private keys (whose public halves are used). A file with no key is an error.
func LoadPublicKeys(path string) ([]PublicKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading service-account key file: %w", err)
	}
	keys, err := ParsePublicKeysPEM(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return keys, nil
}

// ParsePublicKeysPEM is LoadPublicKeys on bytes.
func ParsePublicKeysPEM(data []byte) ([]PublicKey, error) {
	var keys []PublicKey
	for block, rest := pem.Decode(data); block != nil; block, rest = pem.Decode(rest) {
		var pub crypto.PublicKey
		switch block.Type {
		case "PUBLIC KEY":
			k, err := x509.ParsePKIXPublicKey(block.Bytes)
			if err != nil {
				return nil, fmt.Errorf("parsing a PUBLIC KEY block: %w", err)
			}
			pub = k
		case "RSA PUBLIC KEY":
			k, err := x509.ParsePKCS1PublicKey(block.Bytes)
			if err != nil {
				return nil, fmt.Errorf("parsing an RSA PUBLIC KEY block: %w", err)
			}
			pub = k
		case "PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY":
			k, err := parsePrivateKeyBlock(block)
			if err != nil {
				return nil, err
			}
			pub = k.Public()
		default:
			continue
		}
		pk, err := NewPublicKey(pub)
		if err != nil {
			return nil, err
		}
		keys = append(keys, pk)
	}
	if len(keys) == 0 {
		return nil, errors.New("holds no PEM public or private key: give a file with -----BEGIN PUBLIC KEY----- or private key blocks")
	}
	return keys, nil
}

// LoadSigningKey reads the private key of --service-account-signing-key-file.
func LoadSigningKey(path string) (crypto.Signer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading service-account signing key file: %w", err)
	}
	key, err := ParseSigningKeyPEM(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return key, nil
}

// ParseSigningKeyPEM returns the first private key of PEM data, checking kube can sign with it.
func ParseSigningKeyPEM(data []byte) (crypto.Signer, error) {
	for block, rest := pem.Decode(data); block != nil; block, rest = pem.Decode(rest) {
		switch block.Type {
		case "PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY":
			k, err := parsePrivateKeyBlock(block)
			if err != nil {
				return nil, err
			}
			if _, err := Algorithm(k.Public()); err != nil {
				return nil, err
			}
			return k, nil
		}
	}
	return nil, errors.New("holds no PEM private key: give a file with a -----BEGIN PRIVATE KEY----- (or RSA/EC PRIVATE KEY) block")
}

func parsePrivateKeyBlock(block *pem.Block) (crypto.Signer, error) {
	var (
		k   any
		err error
	)
	switch block.Type {
	case "RSA PRIVATE KEY":
		k, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	case "EC PRIVATE KEY":
		k, err = x509.ParseECPrivateKey(block.Bytes)
	default:
		k, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	}
	if err != nil {
		return nil, fmt.Errorf("parsing a %s block: %w", block.Type, err)
	}
	s, ok := k.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("a %s block holds a %T, which cannot sign", block.Type, k)
	}
	return s, nil
}
