package auth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net/http/httptest"
	"testing"
	"time"
)

// testCA issues client certificates for the tests.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newTestCA(t testing.TB) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testCA{cert: cert, key: key, pool: pool}
}

func (ca *testCA) client(t testing.TB, name string, groups ...string) *x509.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: name, Organization: groups},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(30 * time.Minute),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return cert
}

func TestClientCert(t *testing.T) {
	ca, other := newTestCA(t), newTestCA(t)
	roots := ca.pool
	a := &ClientCert{Roots: func() *x509.CertPool { return roots }}
	alice := ca.client(t, "alice", "dev")
	request := func(cert *x509.Certificate) (string, []string, error) {
		r := httptest.NewRequest("GET", "/", nil)
		r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{cert}}
		u, ok, err := a.AuthenticateRequest(r)
		if err != nil || !ok {
			return "", nil, err
		}
		return u.Name, u.Groups, nil
	}

	for i := range 2 { // the second answer comes from the cache
		name, groups, err := request(alice)
		if err != nil || name != "alice" || len(groups) != 1 || groups[0] != "dev" {
			t.Fatalf("request %d: %q %q %v", i, name, groups, err)
		}
		groups[0] = "changed by a later filter" // must not reach the cache
	}
	if _, groups, _ := request(alice); groups[0] != "dev" {
		t.Errorf("a caller's change of the groups reached the cache: %q", groups)
	}
	if _, _, err := request(other.client(t, "mallory")); err == nil {
		t.Error("a certificate of another CA was accepted")
	}
	// A new bundle that no longer holds alice's CA: her cached verification is void.
	roots = other.pool
	if _, _, err := request(alice); err == nil {
		t.Error("a certificate was accepted after its CA left the bundle")
	}
}

// BenchmarkClientCert measures authenticating a request over a connection whose chain has been
// verified before, as every request of an HTTP/2 connection is.
func BenchmarkClientCert(b *testing.B) {
	ca := newTestCA(b)
	a := &ClientCert{Roots: func() *x509.CertPool { return ca.pool }}
	r := httptest.NewRequest("GET", "/", nil)
	r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{ca.client(b, "alice", "dev")}}
	b.ReportAllocs()
	for b.Loop() {
		if _, ok, err := a.AuthenticateRequest(r); !ok || err != nil {
			b.Fatal(err)
		}
	}
}
