package certs

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
)

func TestIssueClient(t *testing.T) {
	dir := t.TempDir()
	initDir(t, dir, nil)
	out := filepath.Join(t.TempDir(), "kube", "jane.conf")
	spec := NewClientSpec(dir, "jane")
	spec.Groups = []string{"dev", "ops", "dev"}
	spec.KubeconfigOut = out
	spec.Server = "https://api.example.com:6443"
	r, err := IssueClient(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if got := actions(t, r); got["jane.key"] != ActionCreated || got["jane.crt"] != ActionCreated || r.File(out).Action != ActionCreated {
		t.Errorf("actions %v", got)
	}
	c := readCert(t, dir, "jane")
	if c.Subject.CommonName != "jane" || !slices.Equal(c.Subject.Organization, []string{"dev", "ops"}) || usageOf(c) != usageClient || len(certHosts(c)) != 0 {
		t.Errorf("certificate %v usages %v SANs %v", c.Subject, c.ExtKeyUsage, certHosts(c))
	}
	cfg, err := clientcmd.LoadFromFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.CurrentContext != "jane@apictl" || cfg.Clusters["apictl"].Server != "https://api.example.com:6443" || len(cfg.AuthInfos["jane"].ClientKeyData) == 0 {
		t.Errorf("kubeconfig %+v", cfg)
	}

	// Again: kept. With other groups: re-issued with the same key.
	r, err = IssueClient(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if r.Changed() {
		t.Errorf("second run changed %v", actions(t, r))
	}
	spec.Groups = []string{"dev"}
	r, err = IssueClient(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]Action{KeyPath(dir, "jane"): ActionKept, CertPath(dir, "jane"): ActionReissued, out: ActionUpdated} {
		if f := r.File(path); f == nil || f.Action != want {
			t.Errorf("after new groups, %s: %+v, want %s", path, f, want)
		}
	}
	if f := r.File(CertPath(dir, "jane")); !strings.Contains(f.Reason, "subject is CN=jane,O=dev+O=ops, not CN=jane,O=dev") {
		t.Errorf("reason %q", f.Reason)
	}
}

func TestIssueClientDefaults(t *testing.T) {
	dir := t.TempDir()
	initDir(t, dir, nil)
	spec := NewClientSpec(dir, "root")
	spec.Groups = []string{AdminGroup}
	spec.AdvertiseAddress = "fd00::1"
	r, err := IssueClient(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.LoadFromFile(filepath.Join(dir, "root.kubeconfig"))
	if err != nil || cfg.Clusters["apictl"].Server != "https://[fd00::1]:6443" {
		t.Errorf("default kubeconfig: %v, %v", cfg, err)
	}
	if len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "root is in system:masters") {
		t.Errorf("notes %q", r.Notes)
	}
}

func TestIssueClientRefuses(t *testing.T) {
	dir := t.TempDir()
	initDir(t, dir, nil)
	empty := t.TempDir()
	tests := []struct {
		name   string
		adjust func(*ClientSpec)
		want   string
	}{
		{"reserved name", func(s *ClientSpec) { s.Name = "admin" }, `name "admin" is used by apictl certs init`},
		{"etcd name", func(s *ClientSpec) { s.Name = "etcd/jane" }, "must be 1 to 64 letters"},
		{"path in name", func(s *ClientSpec) { s.Name = "../jane" }, "must be 1 to 64 letters"},
		{"empty name", func(s *ClientSpec) { s.Name = "" }, "give the user's name"},
		{"long name", func(s *ClientSpec) { s.Name = strings.Repeat("j", 65) }, "must be 1 to 64"},
		{"empty group", func(s *ClientSpec) { s.Groups = []string{"dev", ""} }, "--groups has an empty entry"},
		{"bad server", func(s *ClientSpec) { s.Server = "http://x" }, "--server http://x must be an https:// URL"},
		{"bad port", func(s *ClientSpec) { s.SecurePort = 0 }, "--secure-port 0 must be between 1 and 65535"},
		{"zero validity", func(s *ClientSpec) { s.Validity = 0 }, "--validity 0s must be greater than zero"},
		{"no CA", func(s *ClientSpec) { s.Dir = empty }, "has no CA"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := NewClientSpec(dir, "jane")
			tt.adjust(&spec)
			before := snapshot(t, dir)
			if _, err := IssueClient(context.Background(), spec); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
			if diff := sameFiles(before, snapshot(t, dir)); diff != "" {
				t.Errorf("refused run changed %s", diff)
			}
		})
	}
}

// --key-algorithm takes any case, as for certs init; the key is made with the canonical name.
func TestIssueClientKeyAlgorithmAnyCase(t *testing.T) {
	dir := t.TempDir()
	initDir(t, dir, nil)
	spec := NewClientSpec(dir, "jane")
	spec.KeyAlgorithm = "ED25519"
	if _, err := IssueClient(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	if got := algorithmOf(readCert(t, dir, "jane").PublicKey); got != string(Ed25519) {
		t.Errorf("key algorithm %s, want %s", got, Ed25519)
	}
}
