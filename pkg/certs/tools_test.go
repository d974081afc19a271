package certs

import (
	"context"
	"crypto/x509"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apictl/apictl/internal/testtool"
)

// Every algorithm must give a PKI that openssl and Go both accept: the chain verifies, and the keys
// (PKCS#8 PEM) load and belong to their certificates. This is the one test that makes RSA-4096 keys.
func TestEveryAlgorithmSatisfiesOpenSSLAndGo(t *testing.T) {
	testtool.Tool(t, "openssl")
	for _, alg := range KeyAlgorithms() {
		t.Run(string(alg), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			initDir(t, dir, func(s *ServingSpec) { s.KeyAlgorithm = alg; s.Etcd = alg == DefaultKeyAlgorithm })

			testtool.Run(t, "openssl", "verify", "-CAfile", CertPath(dir, NameCA), CertPath(dir, NameAPIServer), CertPath(dir, NameAdmin))
			ca := readCert(t, dir, NameCA)
			roots := x509.NewCertPool()
			roots.AddCert(ca)
			for _, name := range []string{NameAPIServer, NameAdmin} {
				c := readCert(t, dir, name)
				if _, err := c.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
					t.Errorf("%s: Go rejects the chain: %v", name, err)
				}
				if got := algorithmOf(c.PublicKey); got != string(alg) {
					t.Errorf("%s key is %s", name, got)
				}
				rsa := strings.HasPrefix(string(alg), "rsa-")
				if got := c.KeyUsage&x509.KeyUsageKeyEncipherment != 0; got != rsa {
					t.Errorf("%s: key encipherment %v, want it exactly for RSA keys", name, got)
				}
			}
			for _, name := range []string{NameCA, NameAPIServer, NameAdmin} {
				fromKey := testtool.Run(t, "openssl", "pkey", "-in", KeyPath(dir, name), "-pubout")
				fromCert := testtool.Run(t, "openssl", "x509", "-in", CertPath(dir, name), "-noout", "-pubkey")
				if fromKey != fromCert {
					t.Errorf("%s: openssl says the key does not belong to the certificate", name)
				}
			}
			if alg == DefaultKeyAlgorithm {
				testtool.Run(t, "openssl", "verify", "-CAfile", CertPath(dir, NameEtcdCA),
					CertPath(dir, NameEtcdServer), CertPath(dir, NameEtcdPeer), CertPath(dir, NameAPIServerEtcdClient))
			}
		})
	}
}

func TestFingerprintsMatchOpenSSL(t *testing.T) {
	testtool.Tool(t, "openssl")
	dir := t.TempDir()
	initDir(t, dir, nil)
	info := Describe(readCert(t, dir, NameAPIServer))
	for flag, want := range map[string]string{"-sha256": info.SHA256Fingerprint, "-sha1": info.SHA1Fingerprint} {
		out := testtool.Run(t, "openssl", "x509", "-in", CertPath(dir, NameAPIServer), "-noout", "-fingerprint", flag)
		_, got, _ := strings.Cut(strings.TrimSpace(out), "=")
		if got != want {
			t.Errorf("openssl %s fingerprint %s, apictl %s", flag, got, want)
		}
	}
	in, err := Inspect(context.Background(), filepath.Join(dir, "apiserver.crt"), InspectOptions{})
	if err != nil || in.SHA256Fingerprint != info.SHA256Fingerprint {
		t.Errorf("inspect: %+v %v", in, err)
	}
}
