package join

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testCA is a CA minted for one test: its certificate, key and PEM.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

// newTestCA makes a self-signed CA valid for an hour around now.
func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// servingPair is a serving certificate signed by ca for dnsName only (no IP), as a tls.Certificate.
func (ca *testCA) servingPair(t *testing.T, dnsName string) tls.Certificate {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: dnsName}, DNSNames: []string{dnsName},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// certPEM is the PEM of a parsed certificate.
func certPEM(c *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
}

func TestTokenRoundTrip(t *testing.T) {
	ca := newTestCA(t)
	tok, err := NewToken(ca.pem)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(ca.cert.Raw)
	if tok.CAHash != hex.EncodeToString(sum[:]) {
		t.Errorf("CAHash = %s, want the sha256 of the CA's DER", tok.CAHash)
	}
	if len(tok.Secret) < 32 {
		t.Errorf("secret %q is shorter than 32 characters", tok.Secret)
	}
	s := tok.String()
	if !strings.HasPrefix(s, "apictl1."+tok.CAHash+".") {
		t.Errorf("String() = %q, want apictl1.<hash>.<secret>", s)
	}
	for _, in := range []string{s, s + "\n", "  " + s + "\t\n"} {
		got, err := ParseToken(in)
		if err != nil {
			t.Fatalf("ParseToken(%q): %v", in, err)
		}
		if got != tok {
			t.Errorf("ParseToken(%q) = %+v, want %+v", in, got, tok)
		}
	}
	other, err := NewToken(ca.pem)
	if err != nil {
		t.Fatal(err)
	}
	if other.Secret == tok.Secret {
		t.Error("two tokens share a secret: the secret is not random")
	}
	if other.CAHash != tok.CAHash {
		t.Error("two tokens of one CA pin different hashes")
	}
	if _, err := NewToken([]byte("not a certificate")); err == nil {
		t.Error("NewToken of garbage: no error")
	}
}

func TestParseTokenRefuses(t *testing.T) {
	hash := strings.Repeat("ab", 32)
	secret := strings.Repeat("s", 16)
	tests := []struct {
		name, in, want string
	}{
		{name: "empty", in: "", want: "not an apictl join token"},
		{name: "blank", in: " \n", want: "not an apictl join token"},
		{name: "wrong prefix", in: "apictl2." + hash + "." + secret, want: "not an apictl join token"},
		{name: "kubeadm token", in: "abcdef.0123456789abcdef", want: "not an apictl join token"},
		{name: "two parts", in: "apictl1." + hash, want: "not an apictl join token"},
		{name: "four parts", in: "apictl1." + hash + "." + secret + ".x", want: "not an apictl join token"},
		{name: "hash not hex", in: "apictl1." + strings.Repeat("zz", 32) + "." + secret, want: "CA hash is not 64 hex digits"},
		{name: "hash too short", in: "apictl1." + hash[:62] + "." + secret, want: "CA hash is not 64 hex digits"},
		{name: "hash too long", in: "apictl1." + hash + "ab." + secret, want: "CA hash is not 64 hex digits"},
		{name: "hash odd length", in: "apictl1." + hash + "a." + secret, want: "CA hash is not 64 hex digits"},
		{name: "empty hash", in: "apictl1.." + secret, want: "CA hash is not 64 hex digits"},
		{name: "short secret", in: "apictl1." + hash + "." + secret[:15], want: "secret is too short"},
		{name: "empty secret", in: "apictl1." + hash + ".", want: "secret is too short"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseToken(tt.in)
			if err == nil {
				t.Fatalf("ParseToken(%q) = %+v, want an error", tt.in, got)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParseToken(%q): %q, want it to say %q", tt.in, err, tt.want)
			}
			if len(tt.in) > 20 && strings.Contains(err.Error(), tt.in) {
				t.Errorf("the error echoes the token: %q", err)
			}
		})
	}
	if _, err := ParseToken("apictl1." + hash + "." + secret); err != nil {
		t.Errorf("the shortest valid secret is refused: %v", err)
	}
}

// An upper-case hash still pins its CA: ParseToken lower-cases it as CAHash writes it.
func TestParseTokenUpperCaseHash(t *testing.T) {
	ca := newTestCA(t)
	tok, err := NewToken(ca.pem)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseToken("apictl1." + strings.ToUpper(tok.CAHash) + "." + tok.Secret)
	if err != nil {
		t.Fatal(err)
	}
	if got.CAHash != tok.CAHash {
		t.Errorf("CAHash = %s, want %s", got.CAHash, tok.CAHash)
	}
}

func TestMatchesSecret(t *testing.T) {
	tok := Token{CAHash: strings.Repeat("ab", 32), Secret: "0123456789abcdef-secret"}
	tests := []struct {
		secret string
		want   bool
	}{
		{"0123456789abcdef-secret", true},
		{"0123456789abcdef-secreT", false},
		{"0123456789abcdef-secre", false},
		{"0123456789abcdef-secrets", false},
		{"", false},
		{tok.CAHash, false},
	}
	for _, tt := range tests {
		if got := tok.MatchesSecret(tt.secret); got != tt.want {
			t.Errorf("MatchesSecret(%q) = %v, want %v", tt.secret, got, tt.want)
		}
	}
}

func TestCAHash(t *testing.T) {
	ca := newTestCA(t)
	sum := sha256.Sum256(ca.cert.Raw)
	want := hex.EncodeToString(sum[:])
	got, err := CAHash(ca.pem)
	if err != nil || got != want {
		t.Fatalf("CAHash = %q, %v; want %q", got, err, want)
	}
	// The first certificate of a bundle counts.
	second := newTestCA(t)
	if got, err := CAHash(append(append([]byte{}, ca.pem...), second.pem...)); err != nil || got != want {
		t.Errorf("CAHash of a bundle = %q, %v; want the first certificate's %q", got, err, want)
	}

	keyDER, err := x509.MarshalPKCS8PrivateKey(ca.key)
	if err != nil {
		t.Fatal(err)
	}
	refused := []struct {
		name, want string
		in         []byte
	}{
		{name: "empty", in: nil, want: "no PEM certificate"},
		{name: "not PEM", in: []byte("hello"), want: "no PEM certificate"},
		{name: "DER without PEM", in: ca.cert.Raw, want: "no PEM certificate"},
		{name: "a key, not a certificate", in: pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), want: "no PEM certificate"},
		{name: "CERTIFICATE block that does not parse", in: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("junk")}), want: "parsing the CA certificate"},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			got, err := CAHash(tt.in)
			if err == nil {
				t.Fatalf("CAHash = %q, want an error", got)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("CAHash: %q, want it to say %q", err, tt.want)
			}
		})
	}
}

func TestReadWriteToken(t *testing.T) {
	dir := t.TempDir()
	if got := TokenFile(dir); got != filepath.Join(dir, "join-token") {
		t.Errorf("TokenFile = %s", got)
	}

	t.Run("missing", func(t *testing.T) {
		tok, ok, err := ReadToken(filepath.Join(dir, "missing"))
		if ok || err != nil || tok != (Token{}) {
			t.Errorf("ReadToken of a missing file = %+v, %v, %v; want zero, false, nil", tok, ok, err)
		}
	})

	t.Run("garbage", func(t *testing.T) {
		path := filepath.Join(dir, "garbage")
		if err := os.WriteFile(path, []byte("hello\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, ok, err := ReadToken(path)
		if err == nil || ok {
			t.Fatalf("ReadToken of garbage: ok %v, err %v; want an error", ok, err)
		}
		if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "not an apictl join token") {
			t.Errorf("error %q does not name %s and the problem", err, path)
		}
	})

	t.Run("unreadable", func(t *testing.T) {
		// A directory where the file should be is an error, not "no token".
		_, ok, err := ReadToken(dir)
		if err == nil || ok {
			t.Errorf("ReadToken of a directory: ok %v, err %v; want an error", ok, err)
		}
	})

	t.Run("write and read", func(t *testing.T) {
		tok, err := NewToken(newTestCA(t).pem)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "sub", "join-token")
		if err := WriteToken(path, tok); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if mode := fi.Mode().Perm(); mode != 0o600 {
			t.Errorf("mode %v, want 0600", mode)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != tok.String()+"\n" {
			t.Errorf("file holds %q, want the token and a newline", b)
		}
		got, ok, err := ReadToken(path)
		if err != nil || !ok || got != tok {
			t.Errorf("ReadToken = %+v, %v, %v; want %+v", got, ok, err, tok)
		}

		// Overwriting replaces the token and leaves no temporary file behind.
		tok2, err := NewToken(newTestCA(t).pem)
		if err != nil {
			t.Fatal(err)
		}
		if err := WriteToken(path, tok2); err != nil {
			t.Fatal(err)
		}
		if got, _, err := ReadToken(path); err != nil || got != tok2 {
			t.Errorf("after rewriting: %+v, %v; want %+v", got, err, tok2)
		}
		entries, err := os.ReadDir(filepath.Dir(path))
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 1 {
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			t.Errorf("directory holds %v, want only join-token", names)
		}
	})
}
