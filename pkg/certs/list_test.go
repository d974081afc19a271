package certs

import (
	"bytes"
	"crypto/x509"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apictl/apictl/internal/golden"
	"github.com/apictl/apictl/pkg/output"
)

var (
	serverAuth = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	clientAuth = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
)

// listFixture builds a cert dir with one certificate in every state, from fixed keys and times, so
// that its listing is the same on every run.
func listFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	ca := mintCA(t, testKey(1), "apictl-ca", fixed.Add(-year), fixed.Add(9*year))
	writeFiles(t, dir, NameCA, ca, true)
	etcdCA := mintCA(t, testKey(2), "apictl-etcd-ca", fixed.Add(-year), fixed.Add(5*year))
	writeFiles(t, dir, NameEtcdCA, etcdCA, false) // external: no key
	other := mintCA(t, testKey(3), "elsewhere-ca", fixed.Add(-year), fixed.Add(year))

	leaf := func(name string, signer *KeyPair, seed byte, l leafTemplate) *KeyPair {
		if l.notBefore.IsZero() {
			l.notBefore = fixed.Add(-day)
		}
		l.serial = int64(seed)
		kp := mintLeaf(t, signer, testKey(seed), l)
		writeFiles(t, dir, name, kp, true)
		return kp
	}
	leaf(NameAPIServer, ca, 10, leafTemplate{cn: "apictl-apiserver", eku: serverAuth, dns: []string{"localhost", "api.example.com"},
		ips: []string{"127.0.0.1", "::1"}, notAfter: fixed.Add(348*day + time.Hour)})
	admin := leaf(NameAdmin, ca, 11, leafTemplate{cn: AdminUser, orgs: []string{AdminGroup}, eku: clientAuth, notAfter: fixed.Add(10 * day)})
	leaf("old", ca, 12, leafTemplate{cn: "old", eku: clientAuth, notBefore: fixed.Add(-year), notAfter: fixed.Add(-3 * day)})
	leaf("future", ca, 13, leafTemplate{cn: "future", eku: clientAuth, notBefore: fixed.Add(day), notAfter: fixed.Add(year)})
	leaf("stranger", other, 14, leafTemplate{cn: "stranger", eku: clientAuth, notAfter: fixed.Add(year)})
	leaf("mismatch", ca, 15, leafTemplate{cn: "mismatch", eku: clientAuth, notAfter: fixed.Add(year)})
	wrongKey, _ := encodeKey(testKey(99))
	if err := os.WriteFile(KeyPath(dir, "mismatch"), wrongKey, 0o600); err != nil {
		t.Fatal(err)
	}
	leaf(NameEtcdServer, etcdCA, 16, leafTemplate{cn: "apictl-etcd-server", eku: clientAuth, dns: []string{"localhost"}, notAfter: fixed.Add(year)})
	if err := os.WriteFile(CertPath(dir, "broken"), ca.CertPEM()[:100], 0o644); err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := kubeconfigFor("https://127.0.0.1:6443", AdminUser, ca.Cert, admin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, AdminKubeconfigName), kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestListStatuses(t *testing.T) {
	dir := listFixture(t)
	l, err := List(ListOptions{Dir: dir, Now: fixed, WarnWithin: DefaultWarnWithin})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		status   Status
		signedBy string
		problem  string
	}{
		NameCA:              {StatusOK, "self-signed", ""},
		NameEtcdCA:          {StatusOK, "self-signed", ""},
		NameAPIServer:       {StatusOK, "ca", ""},
		NameAdmin:           {StatusExpiring, "ca", "expires in 10d, within --warn-within 30d"},
		AdminKubeconfigName: {StatusExpiring, "ca", "expires in 10d"},
		"old":               {StatusExpired, "ca", "expired on Apr 06, 2030 09:17 UTC"},
		"future":            {StatusNotYetValid, "ca", "not valid until Apr 10, 2030 09:17 UTC"},
		"stranger":          {StatusBadChain, "CN=elsewhere-ca", `no CA in the cert dir issued it (issuer "CN=elsewhere-ca")`},
		"mismatch":          {StatusKeyMismatch, "ca", "the key beside it belongs to another certificate"},
		NameEtcdServer:      {StatusWrongUsage, "etcd/ca", "lacks server auth, which etcd/server needs"},
	}
	seen := map[string]bool{}
	for _, c := range l.Certificates {
		seen[c.Name] = true
		w, ok := want[c.Name]
		if !ok {
			t.Errorf("unexpected row %q", c.Name)
			continue
		}
		if c.Status != w.status || c.SignedBy != w.signedBy || (w.problem != "" && !strings.Contains(strings.Join(c.Problems, "; "), w.problem)) {
			t.Errorf("%s: status %q, signed by %q, problems %q; want %q, %q, %q", c.Name, c.Status, c.SignedBy, c.Problems, w.status, w.signedBy, w.problem)
		}
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("no row for %s", name)
		}
	}
	if len(l.Unreadable) != 1 || l.Unreadable[0].Path != CertPath(dir, "broken") || !strings.Contains(l.Unreadable[0].Problem, "truncated") {
		t.Errorf("unreadable: %+v", l.Unreadable)
	}
	if l.OK() {
		t.Error("listing with problems reports OK")
	}
	for _, c := range l.Certificates {
		if c.Name == NameEtcdCA && !c.ExternallyManaged {
			t.Error("etcd/ca without key not reported as externally managed")
		}
	}
}

func TestListCAProblemsReachTheirLeaves(t *testing.T) {
	dir := t.TempDir()
	ca := mintCA(t, testKey(1), "apictl-ca", fixed.Add(-year), fixed.Add(-day))
	writeFiles(t, dir, NameCA, ca, true)
	writeFiles(t, dir, NameAdmin, mintLeaf(t, ca, testKey(2), leafTemplate{cn: AdminUser, eku: clientAuth,
		notBefore: fixed.Add(-year), notAfter: fixed.Add(year)}), true)
	// A leaf certificate where the CA belongs is wrong usage.
	writeFiles(t, dir, NameEtcdCA, mintLeaf(t, ca, testKey(3), leafTemplate{cn: "not-a-ca", eku: clientAuth,
		notBefore: fixed.Add(-year), notAfter: fixed.Add(year)}), true)
	l, err := List(ListOptions{Dir: dir, Now: fixed, WarnWithin: DefaultWarnWithin})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Status{}
	for _, c := range l.Certificates {
		got[c.Name] = c.Status
	}
	if got[NameCA] != StatusExpired || got[NameAdmin] != StatusBadChain || got[NameEtcdCA] != StatusBadChain {
		t.Errorf("statuses %v: want the expired CA expired, its leaves bad chain", got)
	}
	for _, c := range l.Certificates {
		if c.Name == NameEtcdCA && !strings.Contains(strings.Join(c.Problems, ";"), "etcd/ca is not a CA certificate") {
			t.Errorf("etcd/ca problems %q", c.Problems)
		}
	}
}

func TestListOutput(t *testing.T) {
	dir := listFixture(t)
	l, err := List(ListOptions{Dir: dir, Now: fixed, WarnWithin: DefaultWarnWithin})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		file     string
		format   output.Format
		terminal bool
	}{
		{"list/table.txt", output.FormatTable, true},
		{"list/pipe.txt", output.FormatTable, false},
		{"list/wide.txt", output.FormatWide, true},
		{"list/json.txt", output.FormatJSON, false},
		{"list/yaml.txt", output.FormatYAML, false},
	} {
		var b bytes.Buffer
		if err := WriteListing(&b, l, tt.format, tt.terminal); err != nil {
			t.Fatal(err)
		}
		golden.Check(t, tt.file, strings.ReplaceAll(b.String(), dir, "<dir>"))
	}
	var b bytes.Buffer
	if err := WriteListingProblems(&b, l); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "list/problems.txt", strings.ReplaceAll(b.String(), dir, "<dir>"))
}

func TestListRejectsWhatIsNotACertDir(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		filepath.Join(dir, "missing"): "does not exist: create the certificates with apictl certs init",
		file:                          "is a file, not a directory",
		dir:                           "holds no certificates",
	} {
		if _, err := List(ListOptions{Dir: path, Now: fixed}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", path, err, want)
		}
	}
	if _, err := List(ListOptions{Dir: dir, Now: fixed, WarnWithin: -time.Hour}); err == nil || !strings.Contains(err.Error(), "--warn-within") {
		t.Errorf("negative --warn-within: %v", err)
	}
}

func TestListFollowsLinkedFiles(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	writeFiles(t, elsewhere, NameCA, mintCA(t, testKey(1), "apictl-ca", fixed.Add(-day), fixed.Add(year)), true)
	for _, name := range []string{"ca.crt", "ca.key"} {
		if err := os.Symlink(filepath.Join(elsewhere, name), filepath.Join(dir, name)); err != nil {
			t.Skipf("symlinks: %v", err)
		}
	}
	l, err := List(ListOptions{Dir: dir, Now: fixed, WarnWithin: DefaultWarnWithin})
	if err != nil || len(l.Certificates) != 1 || l.Certificates[0].KeyPath == "" || !l.OK() {
		t.Errorf("listing %+v, %v: want the linked CA with its key", l, err)
	}
}

func TestListSkipsTemporaryFiles(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, NameCA, mintCA(t, testKey(1), "apictl-ca", fixed.Add(-day), fixed.Add(year)), true)
	if err := os.WriteFile(filepath.Join(dir, ".apiserver.crt.tmp-123"), []byte("partial"), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := List(ListOptions{Dir: dir, Now: fixed, WarnWithin: DefaultWarnWithin})
	if err != nil || len(l.Certificates) != 1 || len(l.Unreadable) != 0 || !l.OK() {
		t.Errorf("listing %+v, %v: want the CA alone", l, err)
	}
}
