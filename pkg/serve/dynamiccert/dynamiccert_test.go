package dynamiccert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

// pair returns a self-signed certificate and its key as PEM.
func pair(t *testing.T, serial int64) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "x"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalPKCS8PrivateKey(key)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
}

func write(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestServingCertReload(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	c1, k1 := pair(t, 1)
	write(t, certFile, c1)
	write(t, keyFile, k1)
	sc, err := NewServingCert(certFile, keyFile, discard)
	if err != nil {
		t.Fatal(err)
	}
	if changed, err := sc.reload(); changed || err != nil {
		t.Errorf("unchanged files: changed=%v err=%v", changed, err)
	}
	c2, k2 := pair(t, 2)
	write(t, certFile, c2) // a new certificate before its key: a mismatched pair
	if changed, err := sc.reload(); changed || err == nil {
		t.Errorf("half-written pair: changed=%v err=%v", changed, err)
	}
	if sc.Current().SerialNumber.Int64() != 1 {
		t.Errorf("the last good pair must stay in use")
	}
	write(t, keyFile, k2)
	if changed, err := sc.reload(); !changed || err != nil || sc.Current().SerialNumber.Int64() != 2 {
		t.Errorf("complete new pair: changed=%v err=%v serial=%d", changed, err, sc.Current().SerialNumber.Int64())
	}
	if _, err := NewServingCert(filepath.Join(dir, "missing.crt"), keyFile, discard); err == nil {
		t.Errorf("a missing file must fail at start")
	}
}

func TestCABundleReload(t *testing.T) {
	file := filepath.Join(t.TempDir(), "ca.crt")
	c1, _ := pair(t, 1)
	write(t, file, c1)
	b, err := NewCABundle(file, discard)
	if err != nil {
		t.Fatal(err)
	}
	first := b.Pool()
	write(t, file, []byte("not a certificate"))
	if changed, err := b.reload(); changed || err == nil || b.Pool() != first {
		t.Errorf("garbage must keep the old pool: changed=%v err=%v", changed, err)
	}
	c2, _ := pair(t, 2)
	write(t, file, append(c1, c2...))
	if changed, err := b.reload(); !changed || err != nil || b.Pool() == first {
		t.Errorf("a new bundle must replace the pool: changed=%v err=%v", changed, err)
	}
}

func TestServingCertExpiryWarnings(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	c1, k1 := pair(t, 1) // valid for another hour
	write(t, certFile, c1)
	write(t, keyFile, k1)
	var logs strings.Builder
	sc, err := NewServingCert(certFile, keyFile, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	count := func(s string) int { return strings.Count(logs.String(), s) }
	if count("expires soon") != 1 {
		t.Fatalf("a certificate an hour from expiry, at start:\n%s", logs.String())
	}
	sc.warnExpiry(time.Now())
	sc.warnExpiry(time.Now().Add(2 * time.Hour))
	sc.warnExpiry(time.Now().Add(3 * time.Hour))
	if count("expires soon") != 1 || count("has expired") != 1 {
		t.Fatalf("each warning once per certificate:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "apictl certs renew apiserver") {
		t.Errorf("no way out named:\n%s", logs.String())
	}
	c2, k2 := pair(t, 2)
	write(t, certFile, c2)
	write(t, keyFile, k2)
	if _, err := sc.reload(); err != nil {
		t.Fatal(err)
	}
	sc.warnExpiry(time.Now().Add(2 * time.Hour))
	if count("has expired") != 2 {
		t.Errorf("a new certificate that expired is warned about again:\n%s", logs.String())
	}
}
