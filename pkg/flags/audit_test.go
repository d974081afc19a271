package flags

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apictl/apictl/pkg/serve"
)

const goodAuditPolicy = "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n"

func TestAuditOptionsValidate(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(good, []byte(goodAuditPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		modify func(*AuditOptions)
		want   []string
	}{
		{"defaults", func(*AuditOptions) {}, nil},
		{"a good policy and log", func(o *AuditOptions) { o.PolicyFile, o.Path = good, "-" }, nil},
		{"legacy format", func(o *AuditOptions) { o.Format = "legacy" }, []string{"--audit-log-format legacy is not supported by apictl: use json"}},
		{"unknown format", func(o *AuditOptions) { o.Format = "xml" }, []string{"--audit-log-format xml is not a known format: use json"}},
		{"other version", func(o *AuditOptions) { o.Version = "audit.k8s.io/v1beta1" },
			[]string{`--audit-log-version audit.k8s.io/v1beta1 is not supported: the allowed version is "audit.k8s.io/v1"`}},
		{"negative numbers", func(o *AuditOptions) { o.MaxAge, o.MaxBackups, o.MaxSize = -1, -2, -3 }, []string{
			"--audit-log-maxage -1 can't be a negative number", "--audit-log-maxbackup -2 can't be a negative number",
			"--audit-log-maxsize -3 can't be a negative number"}},
		{"missing policy", func(o *AuditOptions) { o.PolicyFile = filepath.Join(dir, "nope.yaml") },
			[]string{"--audit-policy-file " + filepath.Join(dir, "nope.yaml") + " does not exist: check the path"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewAuditOptions()
			tt.modify(o)
			var got []string
			for _, err := range o.Validate() {
				got = append(got, err.Error())
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestAuditOptionsApplyTo: the server audits only with both a policy and a log, and says so otherwise.
func TestAuditOptionsApplyTo(t *testing.T) {
	dir := t.TempDir()
	policy := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(policy, []byte(goodAuditPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	silent := filepath.Join(dir, "silent.yaml")
	if err := os.WriteFile(silent, []byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: None\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "sub", "audit.log")
	tests := []struct {
		name         string
		policy, path string
		audits       bool
		warning      string
	}{
		{"neither", "", "", false, ""},
		{"policy only", policy, "", false, "--audit-policy-file is set without --audit-log-path"},
		{"log only", "", logPath, false, "--audit-log-path is set without --audit-policy-file"},
		{"a policy that logs nothing", silent, logPath, false, "every rule of --audit-policy-file has level None"},
		{"both", policy, logPath, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			cfg := &serve.Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))}
			o := NewAuditOptions()
			o.PolicyFile, o.Path = tt.policy, tt.path
			if err := o.ApplyTo(context.Background(), cfg); err != nil {
				t.Fatal(err)
			}
			if (cfg.Audit != nil) != tt.audits {
				t.Errorf("auditing = %v, want %v", cfg.Audit != nil, tt.audits)
			}
			if tt.warning != "" && !strings.Contains(logs.String(), tt.warning) {
				t.Errorf("logs lack %q:\n%s", tt.warning, logs.String())
			}
			if tt.audits {
				if info, err := os.Stat(logPath); err != nil || info.Mode().Perm() != 0o600 {
					t.Errorf("log file: %v, %v; want mode 0600", info, err)
				}
				if info, err := os.Stat(filepath.Dir(logPath)); err != nil || info.Mode().Perm() != 0o700 {
					t.Errorf("log directory: %v, %v; want mode 0700", info, err)
				}
				if err := cfg.Audit.Close(context.Background()); err != nil {
					t.Error(err)
				}
			}
		})
	}
}
