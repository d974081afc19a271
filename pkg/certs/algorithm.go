package certs

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"strings"
)

// KeyAlgorithm names a private key type and size, as --key-algorithm takes it.
type KeyAlgorithm string

// The algorithms apictl generates keys for.
const (
	ECDSAP256 KeyAlgorithm = "ecdsa-p256"
	ECDSAP384 KeyAlgorithm = "ecdsa-p384"
	RSA2048   KeyAlgorithm = "rsa-2048"
	RSA3072   KeyAlgorithm = "rsa-3072"
	RSA4096   KeyAlgorithm = "rsa-4096"
	Ed25519   KeyAlgorithm = "ed25519"
)

// DefaultKeyAlgorithm is fast to generate and accepted by every TLS stack apictl talks to.
const DefaultKeyAlgorithm = ECDSAP256

// KeyAlgorithms lists the algorithms apictl generates, the default first.
func KeyAlgorithms() []KeyAlgorithm {
	return []KeyAlgorithm{ECDSAP256, ECDSAP384, RSA2048, RSA3072, RSA4096, Ed25519}
}

// KeyAlgorithmNames lists the algorithms as strings, for help texts and completion.
func KeyAlgorithmNames() []string {
	algs := KeyAlgorithms()
	names := make([]string, len(algs))
	for i, a := range algs {
		names[i] = string(a)
	}
	return names
}

// ParseKeyAlgorithm checks a --key-algorithm value.
func ParseKeyAlgorithm(s string) (KeyAlgorithm, error) {
	for _, a := range KeyAlgorithms() {
		if strings.EqualFold(s, string(a)) {
			return a, nil
		}
	}
	return "", &FlagError{Flag: "key-algorithm", Value: s,
		Message: "is not a key algorithm apictl generates: use one of " + strings.Join(KeyAlgorithmNames(), ", ")}
}

// keyAlgorithmOrDefault checks a --key-algorithm value; blank means DefaultKeyAlgorithm.
func keyAlgorithmOrDefault(a KeyAlgorithm) (KeyAlgorithm, error) {
	if a == "" {
		return DefaultKeyAlgorithm, nil
	}
	return ParseKeyAlgorithm(string(a))
}

// generateKey makes a new private key. RSA keys take from milliseconds (2048) to seconds (4096).
func generateKey(alg KeyAlgorithm) (crypto.Signer, error) {
	switch alg {
	case ECDSAP256:
		return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case ECDSAP384:
		return ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	case RSA2048:
		return rsa.GenerateKey(rand.Reader, 2048)
	case RSA3072:
		return rsa.GenerateKey(rand.Reader, 3072)
	case RSA4096:
		return rsa.GenerateKey(rand.Reader, 4096)
	case Ed25519:
		_, key, err := ed25519.GenerateKey(rand.Reader)
		return key, err
	}
	return nil, fmt.Errorf("unknown key algorithm %q", alg)
}

// algorithmOf names the algorithm of a public key the way --key-algorithm does, including sizes
// apictl does not generate (rsa-1024, ecdsa-p521), so that inspection describes any key.
func algorithmOf(pub crypto.PublicKey) string {
	switch k := pub.(type) {
	case *ecdsa.PublicKey:
		return "ecdsa-" + strings.ToLower(strings.ReplaceAll(k.Curve.Params().Name, "-", ""))
	case *rsa.PublicKey:
		return fmt.Sprintf("rsa-%d", k.N.BitLen())
	case ed25519.PublicKey:
		return string(Ed25519)
	}
	return fmt.Sprintf("unknown (%T)", pub)
}

// usesKeyEncipherment says whether TLS may encrypt to the key (RSA key exchange); only then does a
// certificate carry the keyEncipherment usage (RFC 8813 for ECDSA, RFC 8410 for Ed25519).
func usesKeyEncipherment(pub crypto.PublicKey) bool {
	_, ok := pub.(*rsa.PublicKey)
	return ok
}
