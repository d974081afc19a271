package dynamiccert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"math/big"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// namedCA returns a self-signed CA certificate with the common name cn, as PEM.
func namedCA(t *testing.T, cn string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// commonNames lists the subjects of pool's certificates, in order.
func commonNames(t *testing.T, pool *x509.CertPool) []string {
	t.Helper()
	var names []string
	//lint:ignore SA1019 deprecated for the system pool only; this pool holds what the test added
	for _, raw := range pool.Subjects() {
		var name pkix.RDNSequence
		if _, err := asn1.Unmarshal(raw, &name); err != nil {
			t.Fatal(err)
		}
		var n pkix.Name
		n.FillFromRDNSequence(&name)
		names = append(names, n.CommonName)
	}
	return names
}

func TestCAUnion(t *testing.T) {
	if NewCAUnion(nil, nil) != nil {
		t.Fatal("a union of no bundles must be nil, so that the server asks for no certificates")
	}
	dir := t.TempDir()
	clientFile, proxyFile := filepath.Join(dir, "ca.crt"), filepath.Join(dir, "front-proxy-ca.crt")
	write(t, clientFile, namedCA(t, "client-ca"))
	write(t, proxyFile, namedCA(t, "front-proxy-ca"))
	client, err := NewCABundle(clientFile, discard)
	if err != nil {
		t.Fatal(err)
	}
	proxy, err := NewCABundle(proxyFile, discard)
	if err != nil {
		t.Fatal(err)
	}
	u := NewCAUnion(client, nil, proxy)
	first := u.Pool()
	if got := commonNames(t, first); !slices.Equal(got, []string{"client-ca", "front-proxy-ca"}) {
		t.Fatalf("union %v, want the client CA, then the front-proxy CA (kube's order)", got)
	}
	if u.Pool() != first {
		t.Error("an unchanged union was rebuilt")
	}
	write(t, proxyFile, namedCA(t, "front-proxy-ca-2"))
	if changed, err := proxy.reload(); !changed || err != nil {
		t.Fatalf("reload: changed=%v err=%v", changed, err)
	}
	if got := commonNames(t, u.Pool()); !slices.Equal(got, []string{"client-ca", "front-proxy-ca-2"}) {
		t.Fatalf("after a reload: union %v", got)
	}
}
