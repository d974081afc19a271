package embedded

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Credentials are the files a client needs to reach a private embedded etcd: the CA that signed its
// serving certificate, and the one client certificate it accepts.
type Credentials struct {
	CAFile, CertFile, KeyFile string
}

// The private etcd's files, in <Dir>/pki. The CA's key is never written: once the three certificates
// are signed it is dropped, so that nobody, apictl included, can mint another client certificate.
// New credentials replace all of them at once.
const (
	pkiDir         = "pki"
	caFile         = "ca.crt"
	serverCertFile = "server.crt"
	serverKeyFile  = "server.key"
	clientCertFile = "client.crt"
	clientKeyFile  = "client.key"
	// credentialsValidity is long because nothing can reach these certificates but apictl on this
	// host; credentialsRenewBefore makes a start renew them well before they expire.
	credentialsValidity    = 10 * 365 * 24 * time.Hour
	credentialsRenewBefore = 365 * 24 * time.Hour
	clientCommonName       = "apictl-apiserver"
)

// ensureCredentials returns the credentials in dir/pki, making new ones when any file is missing,
// unreadable, inconsistent or within credentialsRenewBefore of expiring.
func ensureCredentials(dir string, now time.Time) (server, client Credentials, err error) {
	p := filepath.Join(dir, pkiDir)
	server = Credentials{CAFile: filepath.Join(p, caFile), CertFile: filepath.Join(p, serverCertFile), KeyFile: filepath.Join(p, serverKeyFile)}
	client = Credentials{CAFile: server.CAFile, CertFile: filepath.Join(p, clientCertFile), KeyFile: filepath.Join(p, clientKeyFile)}
	if usable(server, now) && usable(client, now) {
		return server, client, nil
	}
	if err := writeCredentials(p, server, client, now); err != nil {
		return Credentials{}, Credentials{}, fmt.Errorf("making the private etcd's credentials in %s: %w", p, err)
	}
	return server, client, nil
}

// usable reports whether c's pair loads, chains to c's CA and stays valid long enough.
func usable(c Credentials, now time.Time) bool {
	pair, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
	if err != nil {
		return false
	}
	caPEM, err := os.ReadFile(c.CAFile)
	if err != nil {
		return false
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		return false
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return false
	}
	_, err = leaf.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: now.Add(credentialsRenewBefore), KeyUsages: leaf.ExtKeyUsage})
	return err == nil
}

// writeCredentials signs a new CA, serving and client certificate and writes them to p, each file
// through a temporary file and a rename, so that a crash leaves either the old file or the new.
func writeCredentials(p string, server, client Credentials, now time.Time) error {
	if err := os.MkdirAll(p, 0o700); err != nil {
		return err
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	notBefore, notAfter := now.Add(-time.Hour), now.Add(credentialsValidity)
	caTemplate := &x509.Certificate{
		Subject:   pkix.Name{CommonName: "apictl-embedded-etcd-ca"},
		NotBefore: notBefore, NotAfter: notAfter,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true, IsCA: true, MaxPathLenZero: true,
	}
	caTemplate.SerialNumber, err = serial()
	if err != nil {
		return err
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, caKey.Public(), caKey)
	if err != nil {
		return err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return err
	}
	leaf := func(c Credentials, cn string, usage x509.ExtKeyUsage, ips []net.IP, dns []string) error {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return err
		}
		t := &x509.Certificate{
			Subject:   pkix.Name{CommonName: cn},
			NotBefore: notBefore, NotAfter: notAfter,
			KeyUsage:    x509.KeyUsageDigitalSignature,
			ExtKeyUsage: []x509.ExtKeyUsage{usage},
			IPAddresses: ips, DNSNames: dns,
		}
		if t.SerialNumber, err = serial(); err != nil {
			return err
		}
		der, err := x509.CreateCertificate(rand.Reader, t, ca, key.Public(), caKey)
		if err != nil {
			return err
		}
		keyDER, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			return err
		}
		return errors.Join(
			writeFile(c.KeyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})),
			writeFile(c.CertFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})))
	}
	return errors.Join(
		leaf(server, "apictl-embedded-etcd", x509.ExtKeyUsageServerAuth, []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}, []string{"localhost"}),
		leaf(client, clientCommonName, x509.ExtKeyUsageClientAuth, nil, nil),
		writeFile(server.CAFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})))
}

func serial() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
}

// writeFile replaces path with data, readable by the owner only.
func writeFile(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
