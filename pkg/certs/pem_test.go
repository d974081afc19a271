package certs

import (
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"strings"
	"testing"
	"time"
)

func TestKeysRoundTripAsPKCS8(t *testing.T) {
	// RSA-3072 and RSA-4096 are covered by the openssl test; here the slow sizes add nothing.
	for _, alg := range []KeyAlgorithm{ECDSAP256, ECDSAP384, RSA2048, Ed25519} {
		key, err := generateKey(alg)
		if err != nil {
			t.Fatal(err)
		}
		data, err := encodeKey(key)
		if err != nil {
			t.Fatal(err)
		}
		if block, _ := pem.Decode(data); block == nil || block.Type != "PRIVATE KEY" {
			t.Errorf("%s: PEM label %v, want PRIVATE KEY", alg, block)
		}
		back, err := parseKeyPEM(data)
		if err != nil {
			t.Fatalf("%s: %v", alg, err)
		}
		if got := algorithmOf(back.Public()); got != string(alg) {
			t.Errorf("%s read back as %s", alg, got)
		}
	}
}

// Keys written by openssl's older defaults and by cfssl must load too.
func TestParseKeyPEMAcceptsOtherLabels(t *testing.T) {
	ec, _ := generateKey(ECDSAP256)
	sec1, _ := x509.MarshalECPrivateKey(ec.(*ecdsa.PrivateKey))
	rsaKey, _ := generateKey(RSA2048)
	pkcs1 := x509.MarshalPKCS1PrivateKey(rsaKey.(*rsa.PrivateKey))
	ed, _ := x509.MarshalPKCS8PrivateKey(testKey(1))
	for label, der := range map[string][]byte{"EC PRIVATE KEY": sec1, "RSA PRIVATE KEY": pkcs1, "Ed25519 PRIVATE KEY": ed} {
		data := pem.EncodeToMemory(&pem.Block{Type: label, Bytes: der})
		if _, err := parseKeyPEM(data); err != nil {
			t.Errorf("%s: %v", label, err)
		}
	}
}

func TestParseRejectsDamagedPEM(t *testing.T) {
	ca := mintCA(t, testKey(1), "test-ca", fixed, fixed.Add(time.Hour))
	certPEM := ca.CertPEM()
	keyPEM, _ := ca.KeyPEM()
	tests := []struct {
		name string
		data string
		key  bool
		want string
	}{
		{"empty certificate file", "", false, "holds no PEM data"},
		{"not PEM", "hello\n", false, "holds no PEM data"},
		{"truncated certificate", string(certPEM[:len(certPEM)/2]), false, "truncated or damaged PEM block"},
		{"certificate cut before END", strings.TrimSuffix(string(certPEM), "-----END CERTIFICATE-----\n"), false, "truncated or damaged PEM block"},
		{"damaged certificate body", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", false, "holds a damaged certificate"},
		{"key in a certificate file", string(keyPEM), false, "holds a PRIVATE KEY where a certificate belongs"},
		{"truncated key", string(keyPEM[:len(keyPEM)-20]), true, "truncated or damaged PEM block"},
		{"certificate in a key file", string(certPEM), true, "holds no private key (found CERTIFICATE)"},
		{"encrypted key", "-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n", true, "encrypted private key"},
	}
	for _, tt := range tests {
		var err error
		if tt.key {
			_, err = parseKeyPEM([]byte(tt.data))
		} else {
			_, err = parseCertsPEM([]byte(tt.data))
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
		}
	}
}

func TestLoadKeyPairNamesTheFile(t *testing.T) {
	dir := t.TempDir()
	ca := mintCA(t, testKey(1), "test-ca", fixed, fixed.Add(time.Hour))
	writeFiles(t, dir, "ca", ca, true)
	if _, err := loadKeyPair(dir, "ca"); err != nil {
		t.Fatal(err)
	}
	other := mintCA(t, testKey(2), "other-ca", fixed, fixed.Add(time.Hour))
	otherKey, _ := other.KeyPEM()
	writeFiles(t, dir, "ca", ca, false)
	if err := writeFile(KeyPath(dir, "ca"), otherKey); err != nil {
		t.Fatal(err)
	}
	if _, err := loadKeyPair(dir, "ca"); err == nil || !strings.Contains(err.Error(), KeyPath(dir, "ca")+" does not match") {
		t.Errorf("mismatched key: %v", err)
	}
	if _, err := loadKeyPair(dir, "missing"); err == nil || !strings.Contains(err.Error(), CertPath(dir, "missing")+" does not exist") {
		t.Errorf("missing pair: %v", err)
	}
}

func writeFile(path string, data []byte) error {
	return atomicWriter{}.writeFile(path, data, modeKey)
}
