package certs

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// testKey returns an Ed25519 key made from a seed byte. Ed25519 signatures are deterministic, so a
// certificate built from such keys with fixed fields is the same bytes on every run, and golden files
// can hold its fingerprints.
func testKey(seed byte) ed25519.PrivateKey {
	s := make([]byte, ed25519.SeedSize)
	for i := range s {
		s[i] = seed
	}
	return ed25519.NewKeyFromSeed(s)
}

// fixed is the clock of the golden tests.
var fixed = time.Date(2030, time.April, 9, 9, 17, 0, 0, time.UTC)

// leafTemplate is what a hand-made certificate varies.
type leafTemplate struct {
	cn        string
	orgs      []string
	dns       []string
	ips       []string
	eku       []x509.ExtKeyUsage
	notBefore time.Time
	notAfter  time.Time
	serial    int64
}

// mintCA builds a self-signed CA by hand, without cfssl, so tests control every field.
func mintCA(t testing.TB, key crypto.Signer, cn string, notBefore, notAfter time.Time) *KeyPair {
	t.Helper()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
		NotBefore: notBefore, NotAfter: notAfter,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign, BasicConstraintsValid: true, IsCA: true,
	}
	return &KeyPair{Cert: sign(t, tmpl, tmpl, key, key), Key: key}
}

// sign has signer make a certificate from tmpl for key, below parent.
func sign(t testing.TB, tmpl, parent *x509.Certificate, key, signer crypto.Signer) *x509.Certificate {
	t.Helper()
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, key.Public(), signer)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// mintLeaf has ca sign a certificate for key by hand.
func mintLeaf(t testing.TB, ca *KeyPair, key crypto.Signer, l leafTemplate) *KeyPair {
	t.Helper()
	if l.serial == 0 {
		l.serial = 2
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(l.serial), Subject: pkix.Name{CommonName: l.cn, Organization: l.orgs},
		NotBefore: l.notBefore, NotAfter: l.notAfter, DNSNames: l.dns,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: l.eku, BasicConstraintsValid: true,
	}
	for _, ip := range l.ips {
		tmpl.IPAddresses = append(tmpl.IPAddresses, net.ParseIP(ip))
	}
	return &KeyPair{Cert: sign(t, tmpl, ca.Cert, key, ca.Key), Key: key}
}

// writeFiles puts a pair into dir under name; a nil key writes only the certificate.
func writeFiles(t testing.TB, dir, name string, kp *KeyPair, withKey bool) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(CertPath(dir, name)), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(CertPath(dir, name), kp.CertPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	if withKey {
		keyPEM, err := kp.KeyPEM()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(KeyPath(dir, name), keyPEM, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// fileState is what a test compares to say a directory did not change.
type fileState struct {
	data    string
	mode    fs.FileMode
	modTime time.Time
}

// snapshot records every file and directory below dir; a missing dir is an empty snapshot.
func snapshot(t testing.TB, dir string) map[string]fileState {
	t.Helper()
	out := map[string]fileState{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) && path == dir {
				return filepath.SkipDir
			}
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		st := fileState{mode: info.Mode(), modTime: info.ModTime()}
		if !d.IsDir() {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			st.data = string(b)
		}
		rel, _ := filepath.Rel(dir, path)
		out[filepath.ToSlash(rel)] = st
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sameFiles reports how two snapshots differ, or "".
func sameFiles(before, after map[string]fileState) string {
	var diffs []string
	for path, b := range before {
		a, ok := after[path]
		switch {
		case !ok:
			diffs = append(diffs, path+" disappeared")
		case a.data != b.data:
			diffs = append(diffs, path+" changed")
		case a.mode != b.mode:
			diffs = append(diffs, path+" changed mode")
		}
	}
	for path := range after {
		if _, ok := before[path]; !ok {
			diffs = append(diffs, path+" appeared")
		}
	}
	// Sorted: maps iterate in any order.
	sort.Strings(diffs)
	return strings.Join(diffs, "; ")
}

// actions maps each file of a report, relative to its cert dir, to what was done.
func actions(t testing.TB, r *Report) map[string]Action {
	t.Helper()
	out := map[string]Action{}
	for _, f := range r.Files {
		rel, err := filepath.Rel(r.Dir, f.Path)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.ToSlash(rel)] = f.Action
	}
	return out
}

// initDir runs EnsureServing with the defaults plus what adjust changes, failing the test on error.
func initDir(t testing.TB, dir string, adjust func(*ServingSpec)) *Report {
	t.Helper()
	spec := NewServingSpec(dir)
	spec.Hostname = "node1"
	if adjust != nil {
		adjust(&spec)
	}
	r, err := EnsureServing(context.Background(), spec)
	if err != nil {
		t.Fatalf("EnsureServing: %v", err)
	}
	return r
}

// readCert parses the certificate called name in dir.
func readCert(t testing.TB, dir, name string) *x509.Certificate {
	t.Helper()
	data, err := os.ReadFile(CertPath(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	certs, err := parseCertsPEM(data)
	if err != nil {
		t.Fatal(err)
	}
	return certs[0]
}

// loadKeyPair reads and checks the pair called name in dir: both files present and parseable and the
// key matching the certificate. Errors name the file and say how to fix it.
func loadKeyPair(dir, name string) (*KeyPair, error) {
	s, err := loadStored(dir, name)
	if err != nil {
		return nil, err
	}
	switch {
	case s.certErr != nil:
		return nil, s.certErr
	case s.keyErr != nil:
		return nil, s.keyErr
	case s.cert == nil:
		return nil, fmt.Errorf("%s does not exist", s.certPath)
	case s.key == nil:
		return nil, fmt.Errorf("%s does not exist", s.keyPath)
	case !keyMatches(s.cert, s.key):
		return nil, fmt.Errorf("%s does not match %s: the key belongs to another certificate", s.keyPath, s.certPath)
	}
	return &KeyPair{Cert: s.cert, Key: s.key}, nil
}
