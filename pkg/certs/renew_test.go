package certs

import (
	"context"
	"crypto"
	"crypto/x509"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
)

func renewSpec(dir string, adjust func(*RenewSpec)) RenewSpec {
	s := NewRenewSpec(dir)
	s.Hostname = "node1"
	adjust(&s)
	return s
}

func TestRenewKeepsSANsAndKeyAndAddsHosts(t *testing.T) {
	dir := t.TempDir()
	initDir(t, dir, func(s *ServingSpec) { s.Hosts = []string{"old.example.com", "10.0.0.5"} })
	before := snapshot(t, dir)
	old := readCert(t, dir, NameAPIServer)

	r, err := Renew(context.Background(), renewSpec(dir, func(s *RenewSpec) {
		s.Names = []string{"apiserver"}
		s.Hosts = []string{"new.example.com"}
		s.Validity = 2 * year
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Action{"apiserver.key": ActionKept, "apiserver.crt": ActionRenewed}
	if got := actions(t, r); !maps.Equal(got, want) {
		t.Errorf("actions %v, want %v", got, want)
	}
	if f := r.File(CertPath(dir, NameAPIServer)); f.Reason != "SANs added: new.example.com" {
		t.Errorf("reason %q", f.Reason)
	}
	renewed := readCert(t, dir, NameAPIServer)
	if missing := missingHosts(renewed, append(certHosts(old), "new.example.com")); len(missing) > 0 {
		t.Errorf("renewal dropped or lacks %v", missing)
	}
	if !renewed.NotAfter.After(old.NotAfter.Add(300*day)) || renewed.Subject.String() != old.Subject.String() {
		t.Errorf("renewed: subject %v, not after %v (old %v)", renewed.Subject, renewed.NotAfter, old.NotAfter)
	}
	if diff := sameFiles(before, snapshot(t, dir)); diff != "apiserver.crt changed" {
		t.Errorf("changes %q, want only apiserver.crt", diff)
	}
	if last := r.Notes[len(r.Notes)-1]; last != "A running apictl serve picks up the renewed files in "+dir+" without a restart." {
		t.Errorf("last note %q", last)
	}
}

func TestRenewNewKeyRewritesKubeconfig(t *testing.T) {
	dir := t.TempDir()
	initDir(t, dir, nil)
	oldAdmin := readCert(t, dir, NameAdmin)
	oldKey, _ := os.ReadFile(KeyPath(dir, NameAdmin))

	r, err := Renew(context.Background(), renewSpec(dir, func(s *RenewSpec) { s.Names = []string{"admin.crt"}; s.NewKey = true }))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Action{"admin.key": ActionRenewed, "admin.crt": ActionRenewed, "admin.kubeconfig": ActionUpdated}
	if got := actions(t, r); !maps.Equal(got, want) {
		t.Errorf("actions %v, want %v", got, want)
	}
	newKey, _ := os.ReadFile(KeyPath(dir, NameAdmin))
	if string(newKey) == string(oldKey) {
		t.Error("--new-key kept the key")
	}
	admin, err := loadKeyPair(dir, NameAdmin)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.LoadFromFile(filepath.Join(dir, AdminKubeconfigName))
	if err != nil {
		t.Fatal(err)
	}
	user := cfg.AuthInfos[AdminUser]
	wantKey, _ := admin.KeyPEM()
	if string(user.ClientCertificateData) != string(admin.CertPEM()) || string(user.ClientKeyData) != string(wantKey) {
		t.Error("admin.kubeconfig does not embed the renewed pair")
	}
	notes := strings.Join(r.Notes, "\n")
	if !strings.Contains(notes, filepath.Join(dir, AdminKubeconfigName)+" now embeds the renewed admin certificate") ||
		!strings.Contains(notes, "valid until "+FormatTime(oldAdmin.NotAfter)) {
		t.Errorf("notes:\n%s", notes)
	}
}

func TestRenewCA(t *testing.T) {
	dir := t.TempDir()
	initDir(t, dir, func(s *ServingSpec) { s.Etcd = true })
	before := snapshot(t, dir)
	_, err := Renew(context.Background(), renewSpec(dir, func(s *RenewSpec) { s.Names = []string{"ca"} }))
	if err == nil || !strings.Contains(err.Error(), "renewing it needs --yes (apictl certs renew ca --yes)") {
		t.Fatalf("CA without --yes: %v", err)
	}
	_, err = Renew(context.Background(), renewSpec(dir, func(s *RenewSpec) { s.Names = []string{"ca"}; s.ConfirmCA = true; s.NewKey = true }))
	if err == nil || !strings.Contains(err.Error(), "--new-key cannot be used for a CA") {
		t.Fatalf("CA with --new-key: %v", err)
	}
	if diff := sameFiles(before, snapshot(t, dir)); diff != "" {
		t.Fatalf("refused renewals changed %s", diff)
	}

	oldCA := readCert(t, dir, NameCA)
	r, err := Renew(context.Background(), renewSpec(dir, func(s *RenewSpec) { s.Names = []string{"ca", "etcd/ca"}; s.ConfirmCA = true }))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Action{
		"ca.key": ActionKept, "ca.crt": ActionRenewed, "etcd/ca.key": ActionKept, "etcd/ca.crt": ActionRenewed, "admin.kubeconfig": ActionUpdated,
	}
	if got := actions(t, r); !maps.Equal(got, want) {
		t.Errorf("actions %v, want %v", got, want)
	}
	newCA := readCert(t, dir, NameCA)
	if newCA.Equal(oldCA) || newCA.Subject.String() != oldCA.Subject.String() || !newCA.PublicKey.(interface{ Equal(crypto.PublicKey) bool }).Equal(oldCA.PublicKey) {
		t.Error("renewed CA must be a new certificate with the old subject and key")
	}
	if !newCA.MaxPathLenZero {
		t.Error("renewed CA lost its path length constraint")
	}
	// Old leaves verify against the new CA, and the old CA still verifies them too.
	for _, pool := range []*x509.Certificate{oldCA, newCA} {
		roots := x509.NewCertPool()
		roots.AddCert(pool)
		if _, err := readCert(t, dir, NameAPIServer).Verify(x509.VerifyOptions{Roots: roots}); err != nil {
			t.Errorf("apiserver against the %v CA: %v", pool.NotBefore, err)
		}
	}
	cfg, _ := clientcmd.LoadFromFile(filepath.Join(dir, AdminKubeconfigName))
	if string(cfg.Clusters["apictl"].CertificateAuthorityData) != string(encodeCert(newCA)) {
		t.Error("admin.kubeconfig still embeds the old CA")
	}
	notes := strings.Join(r.Notes, "\n")
	for _, want := range []string{"renewed with its old key and subject", "until it expires on " + FormatTime(oldCA.NotAfter),
		"etcd reads its trusted CA file only when it starts"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if l, err := List(ListOptions{Dir: dir, Now: time.Now(), WarnWithin: DefaultWarnWithin}); err != nil || !l.OK() {
		t.Errorf("after renewing the CAs the cert dir is not all ok: %v", err)
	}
}

func TestRenewAll(t *testing.T) {
	dir := t.TempDir()
	initDir(t, dir, func(s *ServingSpec) { s.Etcd = true })
	if _, err := IssueClient(context.Background(), NewClientSpec(dir, "jane")); err != nil {
		t.Fatal(err)
	}
	r, err := Renew(context.Background(), renewSpec(dir, func(s *RenewSpec) { s.All = true }))
	if err != nil {
		t.Fatal(err)
	}
	var renewedCerts []string
	for _, f := range r.Files {
		if f.Kind == KindCertificate && f.Action == ActionRenewed {
			rel, _ := filepath.Rel(dir, f.Path)
			renewedCerts = append(renewedCerts, filepath.ToSlash(rel))
		}
	}
	slices.Sort(renewedCerts)
	want := []string{"admin.crt", "apiserver-etcd-client.crt", "apiserver.crt", "etcd/peer.crt", "etcd/server.crt", "front-proxy-client.crt", "jane.crt"}
	if !slices.Equal(renewedCerts, want) {
		t.Errorf("renewed %v, want every leaf and no CA: %v", renewedCerts, want)
	}
	notes := strings.Join(r.Notes, "\n")
	for _, want := range []string{"etcd reads its certificate and key files again for every new connection", "apictl serve presents " + CertPath(dir, NameAPIServerEtcdClient),
		"jane.kubeconfig now embeds the renewed jane certificate", "the front proxy presents " + CertPath(dir, NameFrontProxyClient)} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if usageOf(readCert(t, dir, NameEtcdServer)) != usageServer|usageClient {
		t.Error("renewing etcd/server lost a usage")
	}
}

func TestRenewRefuses(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, dir string)
		adjust  func(*RenewSpec)
		want    string
	}{
		{name: "nothing named", adjust: func(*RenewSpec) {}, want: "name the certificates to renew, or give --all"},
		{name: "names and all", adjust: func(s *RenewSpec) { s.Names = []string{"admin"}; s.All = true }, want: "name the certificates"},
		{name: "unknown name", adjust: func(s *RenewSpec) { s.Names = []string{"nope"} },
			want: `no certificate "nope" in`},
		{name: "bad SAN", adjust: func(s *RenewSpec) { s.Names = []string{"apiserver"}; s.Hosts = []string{"999.1.1.1"} },
			want: "--hosts 999.1.1.1 looks like an IPv4 address"},
		{name: "missing key", prepare: func(t *testing.T, dir string) { os.Remove(KeyPath(dir, NameAdmin)) },
			adjust: func(s *RenewSpec) { s.Names = []string{"admin"} }, want: "admin.key is missing: renew with --new-key"},
		{name: "external CA", prepare: func(t *testing.T, dir string) { os.Remove(KeyPath(dir, NameCA)) },
			adjust: func(s *RenewSpec) { s.Names = []string{"apiserver"} }, want: "has no key in"},
		{name: "external CAs with all", prepare: func(t *testing.T, dir string) {
			os.Remove(KeyPath(dir, NameCA))
			os.Remove(KeyPath(dir, NameFrontProxyCA))
		},
			adjust: func(s *RenewSpec) { s.All = true }, want: "holds no leaf certificate apictl can renew"},
		{name: "truncated certificate", prepare: func(t *testing.T, dir string) {
			os.WriteFile(CertPath(dir, NameAdmin), []byte("-----BEGIN CERTIFICATE-----\nMII"), 0o644)
		}, adjust: func(s *RenewSpec) { s.All = true }, want: "admin.crt holds a truncated or damaged PEM block"},
		{name: "signed by a replaced CA", prepare: func(t *testing.T, dir string) {
			other := mintCA(t, testKey(7), "apictl-ca", time.Now().Add(-time.Hour), time.Now().Add(year))
			writeFiles(t, dir, NameCA, other, true)
		}, adjust: func(s *RenewSpec) { s.Names = []string{"apiserver"} }, want: "apiserver.crt was not signed by a CA in"},
		{name: "would outlive the CA", adjust: func(s *RenewSpec) { s.Names = []string{"admin"}; s.Validity = 11 * year; s.CAValidity = 20 * year },
			want: "--validity 11y would make"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			initDir(t, dir, nil)
			if tt.prepare != nil {
				tt.prepare(t, dir)
			}
			before := snapshot(t, dir)
			_, err := Renew(context.Background(), renewSpec(dir, tt.adjust))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
			if diff := sameFiles(before, snapshot(t, dir)); diff != "" {
				t.Errorf("refused renewal changed %s", diff)
			}
		})
	}
}

func TestRenewFailingMidwayLeavesTheDirectoryAsItWas(t *testing.T) {
	for n := 0; n < 3; n++ { // admin.key, admin.crt, admin.kubeconfig
		dir := t.TempDir()
		initDir(t, dir, nil)
		before := snapshot(t, dir)
		_, err := renew(context.Background(), renewSpec(dir, func(s *RenewSpec) { s.Names = []string{"admin"}; s.NewKey = true }), &failingWriter{left: n})
		if err == nil {
			t.Fatalf("failing write %d: no error", n+1)
		}
		if diff := sameFiles(before, snapshot(t, dir)); diff != "" {
			t.Errorf("failing write %d: %s", n+1, diff)
		}
	}
}

// A note never says that an old certificate which had already expired "stays valid until" a past time.
func TestRenewNotesOfExpiredCertificates(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	cert := func(notAfter time.Time) *x509.Certificate { return &x509.Certificate{NotAfter: notAfter} }
	tests := []struct {
		name      string
		rn        renewed
		want, not string
	}{
		{name: "expired etcd client", rn: renewed{name: NameAPIServerEtcdClient, path: "/pki/apiserver-etcd-client.crt", old: cert(now.Add(-time.Hour))},
			want: "the old apiserver-etcd-client certificate had already expired on ", not: "stays valid"},
		{name: "expired etcd CA", rn: renewed{name: NameEtcdCA, path: "/pki/etcd/ca.crt", isCA: true, old: cert(now.Add(-day))},
			want: "restart each etcd member", not: "keep working until"},
		{name: "valid etcd client", rn: renewed{name: NameAPIServerEtcdClient, path: "/pki/apiserver-etcd-client.crt", old: cert(now.Add(day))},
			want: "stays valid until", not: "already expired"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			notes := renewNotes("/pki", []*renewed{&tt.rn}, now)
			if !strings.Contains(notes[0], tt.want) || strings.Contains(notes[0], tt.not) {
				t.Errorf("note %q: want %q, not %q", notes[0], tt.want, tt.not)
			}
		})
	}
}
