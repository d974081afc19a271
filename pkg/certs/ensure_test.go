package certs

import (
	"context"
	"crypto/x509"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
)

func TestEnsureServingCreatesThePKI(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data", "pki")
	r := initDir(t, dir, func(s *ServingSpec) {
		s.Hosts = []string{"10.0.0.5", "API.example.com", "*.apps.example.com"}
		s.AdvertiseAddress = "192.168.1.10"
	})

	wantFiles := []string{"ca.key", "ca.crt", "apiserver.key", "apiserver.crt", "admin.key", "admin.crt",
		"front-proxy-ca.key", "front-proxy-ca.crt", "front-proxy-client.key", "front-proxy-client.crt", "sa.key", "sa.pub", "admin.kubeconfig"}
	var got []string
	for _, f := range r.Files {
		rel, _ := filepath.Rel(dir, f.Path)
		got = append(got, rel)
		if f.Action != ActionCreated {
			t.Errorf("%s: action %s, want created", rel, f.Action)
		}
	}
	if !slices.Equal(got, wantFiles) {
		t.Errorf("files %v, want (keys before certificates, kubeconfig last) %v", got, wantFiles)
	}
	if r.CACert != filepath.Join(dir, "ca.crt") || r.ServingCert != filepath.Join(dir, "apiserver.crt") ||
		r.ServingKey != filepath.Join(dir, "apiserver.key") || r.AdminKubeconfig != filepath.Join(dir, "admin.kubeconfig") {
		t.Errorf("report paths %+v", r)
	}

	modes := map[string]fs.FileMode{
		"ca.key": 0o600, "ca.crt": 0o644, "apiserver.key": 0o600, "apiserver.crt": 0o644,
		"admin.key": 0o600, "admin.crt": 0o644, "admin.kubeconfig": 0o600, ".": 0o700, "..": 0o700,
		"front-proxy-ca.key": 0o600, "front-proxy-ca.crt": 0o644, "front-proxy-client.key": 0o600, "front-proxy-client.crt": 0o644,
		"sa.key": 0o600, "sa.pub": 0o644,
	}
	for name, want := range modes {
		info, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", name, info.Mode().Perm(), want)
		}
	}

	ca := readCert(t, dir, NameCA)
	if !ca.IsCA || ca.MaxPathLen != 0 || !ca.MaxPathLenZero {
		t.Errorf("CA: IsCA %v, path length %d (zero %v); want a CA that signs leaves only", ca.IsCA, ca.MaxPathLen, ca.MaxPathLenZero)
	}
	if life := ca.NotAfter.Sub(ca.NotBefore); life != DefaultCAValidity {
		t.Errorf("CA lifetime %v, want %v", life, DefaultCAValidity)
	}

	serving := readCert(t, dir, NameAPIServer)
	wantSANs := []string{"localhost", "node1", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
		"kubernetes.default.svc.cluster.local", "api.example.com", "*.apps.example.com", "127.0.0.1", "::1", "192.168.1.10", "10.0.0.5"}
	if missing := missingHosts(serving, wantSANs); len(missing) > 0 {
		t.Errorf("serving certificate lacks %v; has %v", missing, certHosts(serving))
	}
	if !slices.Equal(serving.ExtKeyUsage, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}) {
		t.Errorf("serving certificate usages %v, want server auth only", serving.ExtKeyUsage)
	}
	if serving.KeyUsage != x509.KeyUsageDigitalSignature {
		t.Errorf("ECDSA serving certificate key usage %v, want digital signature only", serving.KeyUsage)
	}
	if got := time.Until(serving.NotAfter); got < DefaultValidity-time.Minute || got > DefaultValidity {
		t.Errorf("serving certificate expires in %v, want about %v", got, DefaultValidity)
	}

	admin := readCert(t, dir, NameAdmin)
	if admin.Subject.CommonName != AdminUser || !slices.Equal(admin.Subject.Organization, []string{AdminGroup}) {
		t.Errorf("admin subject %v", admin.Subject)
	}
	if !slices.Equal(admin.ExtKeyUsage, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}) || len(certHosts(admin)) != 0 {
		t.Errorf("admin usages %v, SANs %v; want client auth and no SANs", admin.ExtKeyUsage, certHosts(admin))
	}

	roots := x509.NewCertPool()
	roots.AddCert(ca)
	for name, eku := range map[string]x509.ExtKeyUsage{NameAPIServer: x509.ExtKeyUsageServerAuth, NameAdmin: x509.ExtKeyUsageClientAuth} {
		if _, err := readCert(t, dir, name).Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{eku}}); err != nil {
			t.Errorf("%s does not verify against ca.crt: %v", name, err)
		}
	}
	// The front proxy has its own CA, as kubeadm's has, so that its client certificate, which may assert
	// any user in request headers, is not an ordinary client certificate and no admin pair is a proxy's.
	proxyCA := readCert(t, dir, NameFrontProxyCA)
	if !proxyCA.IsCA || proxyCA.Subject.CommonName != "front-proxy-ca" || proxyCA.Equal(ca) {
		t.Errorf("front-proxy CA: IsCA %v, subject %v", proxyCA.IsCA, proxyCA.Subject)
	}
	proxy := readCert(t, dir, NameFrontProxyClient)
	if proxy.Subject.String() != "CN=front-proxy-client" || !slices.Equal(proxy.ExtKeyUsage, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}) {
		t.Errorf("front-proxy client: subject %v, usages %v; want CN=front-proxy-client and client auth", proxy.Subject, proxy.ExtKeyUsage)
	}
	proxyRoots := x509.NewCertPool()
	proxyRoots.AddCert(proxyCA)
	clientAuth := []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	if _, err := proxy.Verify(x509.VerifyOptions{Roots: proxyRoots, KeyUsages: clientAuth}); err != nil {
		t.Errorf("front-proxy-client does not verify against front-proxy-ca.crt: %v", err)
	}
	if _, err := proxy.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: clientAuth}); err == nil {
		t.Error("front-proxy-client verifies against ca.crt: it would authenticate as itself")
	}
	if _, err := admin.Verify(x509.VerifyOptions{Roots: proxyRoots, KeyUsages: clientAuth}); err == nil {
		t.Error("admin verifies against front-proxy-ca.crt: it could assert any user in headers")
	}
	if _, err := serving.Verify(x509.VerifyOptions{Roots: roots, DNSName: "x.apps.example.com"}); err != nil {
		t.Errorf("wildcard SAN: %v", err)
	}
	if _, err := loadKeyPair(dir, NameAPIServer); err != nil {
		t.Errorf("loadKeyPair: %v", err)
	}

	cfg, err := clientcmd.LoadFromFile(r.AdminKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.CurrentContext != "apictl-admin@apictl" || cfg.Clusters["apictl"].Server != "https://192.168.1.10:6443" {
		t.Errorf("kubeconfig context %q, server %q", cfg.CurrentContext, cfg.Clusters["apictl"].Server)
	}
}

func TestEnsureServingKeepsWhatIsValid(t *testing.T) {
	dir := t.TempDir()
	hosts := func(s *ServingSpec) { s.Hosts = []string{"10.0.0.5", "api.example.com"}; s.Etcd = true }
	initDir(t, dir, hosts)
	before := snapshot(t, dir)

	r := initDir(t, dir, hosts)
	for _, f := range r.Files {
		if f.Action != ActionKept {
			t.Errorf("second run: %s %s (%s), want kept", f.Path, f.Action, f.Reason)
		}
	}
	if r.Changed() {
		t.Error("second run reports a change")
	}
	after := snapshot(t, dir)
	if diff := sameFiles(before, after); diff != "" {
		t.Errorf("second run changed files: %s", diff)
	}
	for path, st := range before {
		if !after[path].modTime.Equal(st.modTime) {
			t.Errorf("second run touched %s", path)
		}
	}
}

func TestEnsureServingReissuesOnlyWhatNoLongerFits(t *testing.T) {
	dir := t.TempDir()
	initDir(t, dir, func(s *ServingSpec) { s.Hosts = []string{"10.0.0.5", "api.example.com"} })
	before := snapshot(t, dir)
	oldKey := before["apiserver.key"].data

	r := initDir(t, dir, func(s *ServingSpec) { s.Hosts = []string{"10.0.0.5", "new.example.com"} })
	want := map[string]Action{
		"ca.key": ActionKept, "ca.crt": ActionKept, "apiserver.key": ActionKept, "apiserver.crt": ActionReissued,
		"admin.key": ActionKept, "admin.crt": ActionKept, "admin.kubeconfig": ActionKept,
		"front-proxy-ca.key": ActionKept, "front-proxy-ca.crt": ActionKept, "front-proxy-client.key": ActionKept, "front-proxy-client.crt": ActionKept,
		"sa.key": ActionKept, "sa.pub": ActionKept,
	}
	if got := actions(t, r); !maps.Equal(got, want) {
		t.Errorf("actions %v, want %v", got, want)
	}
	if f := r.File(filepath.Join(dir, "apiserver.crt")); f == nil || f.Reason != "SANs lacked new.example.com" {
		t.Errorf("re-issue reason: %+v", f)
	}
	after := snapshot(t, dir)
	if diff := sameFiles(before, after); diff != "apiserver.crt changed" {
		t.Errorf("changes: %q, want only apiserver.crt", diff)
	}
	if after["apiserver.key"].data != oldKey {
		t.Error("re-issuing for a SAN replaced the key")
	}
	serving := readCert(t, dir, NameAPIServer)
	if missing := missingHosts(serving, []string{"api.example.com", "new.example.com", "10.0.0.5"}); len(missing) > 0 {
		t.Errorf("re-issued certificate dropped or lacks %v", missing)
	}
}

func TestEnsureServingForce(t *testing.T) {
	dir := t.TempDir()
	initDir(t, dir, func(s *ServingSpec) { s.Hosts = []string{"old.example.com"} })
	before := snapshot(t, dir)

	r := initDir(t, dir, func(s *ServingSpec) { s.Force = true })
	want := map[string]Action{
		"ca.key": ActionKept, "ca.crt": ActionKept, "apiserver.key": ActionReissued, "apiserver.crt": ActionReissued,
		"admin.key": ActionReissued, "admin.crt": ActionReissued, "admin.kubeconfig": ActionUpdated,
		"front-proxy-ca.key": ActionKept, "front-proxy-ca.crt": ActionKept, "front-proxy-client.key": ActionReissued, "front-proxy-client.crt": ActionReissued,
		"sa.key": ActionKept, "sa.pub": ActionKept, // --force never replaces the service-account key: tokens would stop verifying
	}
	if got := actions(t, r); !maps.Equal(got, want) {
		t.Errorf("actions %v, want %v", got, want)
	}
	after := snapshot(t, dir)
	if after["apiserver.key"].data == before["apiserver.key"].data {
		t.Error("--force kept the serving key")
	}
	if slices.Contains(certHosts(readCert(t, dir, NameAPIServer)), "old.example.com") {
		t.Error("--force kept a SAN that was not asked for")
	}

	r = initDir(t, dir, func(s *ServingSpec) { s.ForceCA = true })
	want = map[string]Action{
		"ca.key": ActionReissued, "ca.crt": ActionReissued, "apiserver.key": ActionKept, "apiserver.crt": ActionReissued,
		"admin.key": ActionKept, "admin.crt": ActionReissued, "admin.kubeconfig": ActionUpdated,
		"front-proxy-ca.key": ActionReissued, "front-proxy-ca.crt": ActionReissued, "front-proxy-client.key": ActionKept, "front-proxy-client.crt": ActionReissued,
		"sa.key": ActionKept, "sa.pub": ActionKept,
	}
	if got := actions(t, r); !maps.Equal(got, want) {
		t.Errorf("--force-ca: actions %v, want %v", got, want)
	}
	ca := readCert(t, dir, NameCA)
	if checkSignedBy(readCert(t, dir, NameAdmin), ca) != nil {
		t.Error("after --force-ca the admin certificate is not signed by the new CA")
	}
	if f := r.File(filepath.Join(dir, "apiserver.crt")); f == nil || !strings.Contains(f.Reason, "not signed by") {
		t.Errorf("leaf re-issue reason after --force-ca: %+v", f)
	}
}

func TestEnsureServingRepairsLeaves(t *testing.T) {
	now := time.Now()
	tests := []struct {
		name   string
		leaf   func(ca *KeyPair) *KeyPair
		reason string
	}{
		{"expired", func(ca *KeyPair) *KeyPair {
			return mintLeaf(t, ca, testKey(2), leafTemplate{cn: "apictl-apiserver", eku: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
				dns: []string{"localhost"}, notBefore: now.Add(-48 * time.Hour), notAfter: now.Add(-time.Hour)})
		}, "expired on"},
		{"client usage only", func(ca *KeyPair) *KeyPair {
			return mintLeaf(t, ca, testKey(2), leafTemplate{cn: "apictl-apiserver", eku: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
				notBefore: now.Add(-time.Hour), notAfter: now.Add(time.Hour)})
		}, "lacks server auth"},
		{"signed by another CA", func(*KeyPair) *KeyPair {
			other := mintCA(t, testKey(9), "other-ca", now.Add(-time.Hour), now.Add(24*time.Hour))
			return mintLeaf(t, other, testKey(2), leafTemplate{cn: "apictl-apiserver", eku: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
				notBefore: now.Add(-time.Hour), notAfter: now.Add(time.Hour)})
		}, "not signed by"},
		{"other subject", func(ca *KeyPair) *KeyPair {
			return mintLeaf(t, ca, testKey(2), leafTemplate{cn: "someone", eku: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
				notBefore: now.Add(-time.Hour), notAfter: now.Add(time.Hour)})
		}, "subject is CN=someone, not CN=apictl-apiserver"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			initDir(t, dir, nil)
			ca, err := loadKeyPair(dir, NameCA)
			if err != nil {
				t.Fatal(err)
			}
			writeFiles(t, dir, NameAPIServer, tt.leaf(ca), true)
			r := initDir(t, dir, nil)
			f := r.File(CertPath(dir, NameAPIServer))
			if f == nil || f.Action != ActionReissued || !strings.Contains(f.Reason, tt.reason) {
				t.Fatalf("apiserver.crt: %+v, want re-issued because %q", f, tt.reason)
			}
			if k := r.File(KeyPath(dir, NameAPIServer)); k.Action != ActionKept {
				t.Errorf("key %s, want kept", k.Action)
			}
			l, err := List(ListOptions{Dir: dir, Now: time.Now(), WarnWithin: DefaultWarnWithin})
			if err != nil || !l.OK() {
				t.Errorf("after the repair the cert dir is not all ok: %+v, %v", l, err)
			}
		})
	}
}

func TestEnsureServingExternalCA(t *testing.T) {
	dir := t.TempDir()
	initDir(t, dir, nil)
	if err := os.Remove(KeyPath(dir, NameCA)); err != nil {
		t.Fatal(err)
	}
	r := initDir(t, dir, nil)
	if !r.ExternalCA || r.CAKey != "" {
		t.Errorf("report on an external CA: external %v, CA key %q", r.ExternalCA, r.CAKey)
	}
	if f := r.File(CertPath(dir, NameCA)); f.Action != ActionKept || !strings.Contains(f.Reason, "external CA") {
		t.Errorf("ca.crt: %+v", f)
	}

	before := snapshot(t, dir)
	spec := NewServingSpec(dir)
	spec.Hostname = "node1"
	spec.Hosts = []string{"new.example.com"}
	_, err := EnsureServing(context.Background(), spec)
	if err == nil || !strings.Contains(err.Error(), "external CA") || !strings.Contains(err.Error(), "SANs lacked new.example.com") {
		t.Errorf("a leaf needing a signature from an external CA: %v", err)
	}
	if diff := sameFiles(before, snapshot(t, dir)); diff != "" {
		t.Errorf("failed run changed files: %s", diff)
	}
}

func TestEnsureServingRejectsBadInput(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, dir string) string // returns the cert dir to use
		adjust  func(*ServingSpec)
		want    []string
	}{
		{name: "IP-like SAN", adjust: func(s *ServingSpec) { s.Hosts = []string{"999.1.1.1"} },
			want: []string{"--hosts 999.1.1.1 looks like an IPv4 address but is not one"}},
		{name: "bad DNS name", adjust: func(s *ServingSpec) { s.Hosts = []string{"bad_name!"} },
			want: []string{"--hosts bad_name! is neither an IP address nor a valid DNS name"}},
		{name: "every problem at once", adjust: func(s *ServingSpec) {
			s.Hosts = []string{"999.1.1.1", "ok.example.com", ""}
			s.KeyAlgorithm = "dsa"
			s.Validity = -time.Hour
			s.CAValidity = 0
			s.AdvertiseAddress = "nowhere"
			s.SecurePort = 70000
		}, want: []string{"--hosts 999.1.1.1", "--hosts has an empty entry", "--key-algorithm dsa is not a key algorithm", "--validity -1h0m0s must be greater than zero",
			"--ca-validity 0s must be greater than zero", "--advertise-address nowhere is not an IP address", "--secure-port 70000"}},
		{name: "etcd hosts without etcd", adjust: func(s *ServingSpec) { s.EtcdHosts = []string{"etcd-0"} },
			want: []string{"--etcd-hosts etcd-0 is given without --etcd"}},
		{name: "leaf longer than CA", adjust: func(s *ServingSpec) { s.Validity = 20 * year },
			want: []string{"--validity 20y must be shorter than --ca-validity 10y"}},
		{name: "cert dir is a file", prepare: func(t *testing.T, dir string) string {
			path := filepath.Join(dir, "pki")
			if err := os.WriteFile(path, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			return path
		}, want: []string{"is a file, not a directory"}},
		{name: "a parent is a file", prepare: func(t *testing.T, dir string) string {
			if err := os.WriteFile(filepath.Join(dir, "data"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(dir, "data", "pki")
		}, want: []string{"data is a file, not a directory"}},
		{name: "truncated certificate", prepare: func(t *testing.T, dir string) string {
			initDir(t, dir, nil)
			data, _ := os.ReadFile(CertPath(dir, NameAPIServer))
			if err := os.WriteFile(CertPath(dir, NameAPIServer), data[:len(data)/2], 0o644); err != nil {
				t.Fatal(err)
			}
			return dir
		}, want: []string{"apiserver.crt holds a truncated or damaged PEM block", "init --force"}},
		{name: "key that does not match", prepare: func(t *testing.T, dir string) string {
			initDir(t, dir, nil)
			admin, _ := os.ReadFile(KeyPath(dir, NameAdmin))
			if err := os.WriteFile(KeyPath(dir, NameAPIServer), admin, 0o600); err != nil {
				t.Fatal(err)
			}
			return dir
		}, want: []string{"apiserver.key does not match", "apiserver.crt (key mismatch)"}},
		{name: "CA key that does not match", prepare: func(t *testing.T, dir string) string {
			initDir(t, dir, nil)
			admin, _ := os.ReadFile(KeyPath(dir, NameAdmin))
			if err := os.WriteFile(KeyPath(dir, NameCA), admin, 0o600); err != nil {
				t.Fatal(err)
			}
			return dir
		}, want: []string{"ca.key does not match", "--force-ca"}},
		{name: "CA key without certificate", prepare: func(t *testing.T, dir string) string {
			initDir(t, dir, nil)
			if err := os.Remove(CertPath(dir, NameCA)); err != nil {
				t.Fatal(err)
			}
			return dir
		}, want: []string{"ca.key exists without", "ca.crt"}},
		{name: "expired CA", prepare: func(t *testing.T, dir string) string {
			ca := mintCA(t, testKey(1), "apictl-ca", time.Now().Add(-48*time.Hour), time.Now().Add(-time.Hour))
			writeFiles(t, dir, NameCA, ca, true)
			return dir
		}, want: []string{"ca.crt expired on", "apictl certs renew ca --yes"}},
		{name: "leaf would outlive an existing CA", prepare: func(t *testing.T, dir string) string {
			ca := mintCA(t, testKey(1), "apictl-ca", time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour))
			writeFiles(t, dir, NameCA, ca, true)
			return dir
		}, want: []string{"--validity 1y would make", "outlive its CA", "apictl certs renew ca --yes"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.prepare != nil {
				dir = tt.prepare(t, dir)
			}
			parent := filepath.Dir(dir)
			before := snapshot(t, parent)
			spec := NewServingSpec(dir)
			spec.Hostname = "node1"
			if tt.adjust != nil {
				tt.adjust(&spec)
			}
			_, err := EnsureServing(context.Background(), spec)
			if err == nil {
				t.Fatal("no error")
			}
			for _, want := range tt.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error lacks %q:\n%v", want, err)
				}
			}
			if diff := sameFiles(before, snapshot(t, parent)); diff != "" {
				t.Errorf("failed run changed files: %s", diff)
			}
		})
	}
}

// failingWriter writes through the real writer until its budget runs out, then fails.
type failingWriter struct{ left int }

func (w *failingWriter) writeFile(path string, data []byte, mode fs.FileMode) error {
	if w.left == 0 {
		return errors.New("disk full (injected)")
	}
	w.left--
	return atomicWriter{}.writeFile(path, data, mode)
}

func TestEnsureServingFailingMidwayLeavesTheDirectoryAsItWas(t *testing.T) {
	for existing, writes := range map[bool]int{false: 7, true: 5} {
		for n := 0; n < writes; n++ {
			root := t.TempDir()
			dir := filepath.Join(root, "data", "pki")
			spec := NewServingSpec(dir)
			spec.Hostname = "node1"
			if existing {
				initDir(t, dir, nil)
				spec.Force = true // rewrite every leaf and the kubeconfig
			}
			before := snapshot(t, root)
			_, err := ensureServing(context.Background(), spec, &failingWriter{left: n})
			if err == nil || !strings.Contains(err.Error(), "disk full") {
				t.Fatalf("existing %v, failing write %d: error %v", existing, n+1, err)
			}
			if diff := sameFiles(before, snapshot(t, root)); diff != "" {
				t.Errorf("existing %v, failing write %d: %s", existing, n+1, diff)
			}
		}
	}
}

func TestEnsureServingStopsWhenCanceled(t *testing.T) {
	root := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	spec := NewServingSpec(filepath.Join(root, "pki"))
	if _, err := EnsureServing(ctx, spec); !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Errorf("a canceled run wrote %v", entries)
	}
}

// A reader (a serving process reloading its certificate) must never see a half-written file, however
// often the pair is rewritten.
func TestEnsureServingReaderNeverSeesPartialFiles(t *testing.T) {
	dir := t.TempDir()
	initDir(t, dir, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	problems := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			data, err := os.ReadFile(CertPath(dir, NameAPIServer))
			if err == nil {
				_, err = parseCertsPEM(data)
			}
			if err != nil {
				problems <- err
				return
			}
		}
	}()
	for i := 0; i < 20; i++ {
		initDir(t, dir, func(s *ServingSpec) { s.Force = true })
	}
	cancel()
	<-done
	select {
	case err := <-problems:
		t.Fatalf("reader saw a broken serving certificate: %v", err)
	default:
	}
}

func TestEnsureServingWithEtcd(t *testing.T) {
	dir := t.TempDir()
	initDir(t, dir, func(s *ServingSpec) {
		s.Etcd = true
		s.EtcdHosts = []string{"etcd-0.example.com", "10.0.0.7"}
		s.AdvertiseAddress = "fd00::5"
	})
	etcdCA := readCert(t, dir, NameEtcdCA)
	for _, name := range []string{NameEtcdServer, NameEtcdPeer} {
		c := readCert(t, dir, name)
		if usageOf(c) != usageServer|usageClient || len(c.ExtKeyUsage) != 2 {
			t.Errorf("%s usages %v, want server and client auth", name, c.ExtKeyUsage)
		}
		want := []string{"localhost", "node1", "127.0.0.1", "::1", "fd00::5", "etcd-0.example.com", "10.0.0.7"}
		if got := certHosts(c); !slices.Equal(got, []string{"localhost", "node1", "etcd-0.example.com", "127.0.0.1", "::1", "fd00::5", "10.0.0.7"}) {
			t.Errorf("%s SANs %v, want %v", name, got, want)
		}
		if checkSignedBy(c, etcdCA) != nil {
			t.Errorf("%s not signed by the etcd CA", name)
		}
	}
	client := readCert(t, dir, NameAPIServerEtcdClient)
	if checkSignedBy(client, etcdCA) != nil || usageOf(client) != usageClient {
		t.Errorf("apiserver-etcd-client: signed by %v, usages %v", client.Issuer, client.ExtKeyUsage)
	}
	if checkSignedBy(readCert(t, dir, NameAPIServer), etcdCA) == nil {
		t.Error("the serving certificate is signed by the etcd CA")
	}
	cfg, err := clientcmd.LoadFromFile(filepath.Join(dir, AdminKubeconfigName))
	if err != nil || cfg.Clusters["apictl"].Server != "https://[fd00::5]:6443" {
		t.Errorf("kubeconfig server for an IPv6 advertise address: %v %v", cfg, err)
	}
}
