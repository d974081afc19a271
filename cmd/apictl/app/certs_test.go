package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/apictl/apictl/internal/golden"
	"github.com/apictl/apictl/pkg/certs"
)

// expiryDates matches the dates certs prints, which change with every run.
var expiryDates = regexp.MustCompile(`[A-Z][a-z]{2} \d{2}, \d{4} \d{2}:\d{2} UTC`)

// stable replaces what differs between runs (dates, and the widths they give table columns) so
// that output can be compared with a golden file.
func stable(s string) string {
	return expiryDates.ReplaceAllString(s, "Mon DD, YYYY hh:mm UTC")
}

func TestCertsExitCodes(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		code    int
		errPart string
	}{
		{name: "group alone prints help", args: []string{"certs"}, code: ExitOK},
		{name: "unknown subcommand", args: []string{"certs", "lst"}, code: ExitUsage, errPart: "Did you mean this?\n\tlist"},
		{name: "invalid SAN", args: []string{"certs", "init", "--hosts", "999.1.1.1"}, code: ExitFailure,
			errPart: "--hosts 999.1.1.1 looks like an IPv4 address but is not one"},
		{name: "invalid DNS name", args: []string{"certs", "init", "--hosts", "bad_name!"}, code: ExitFailure,
			errPart: "--hosts bad_name! is neither an IP address nor a valid DNS name"},
		{name: "unknown algorithm", args: []string{"certs", "init", "--key-algorithm", "dsa-1024"}, code: ExitFailure,
			errPart: "--key-algorithm dsa-1024 is not a key algorithm apictl generates"},
		{name: "zero validity", args: []string{"certs", "init", "--validity", "0"}, code: ExitFailure, errPart: "--validity 0s must be greater than zero"},
		{name: "negative validity", args: []string{"certs", "init", "--validity=-1d"}, code: ExitFailure, errPart: "--validity -1d must be greater than zero"},
		{name: "leaf longer than CA", args: []string{"certs", "init", "--validity", "11y"}, code: ExitFailure,
			errPart: "--validity 11y must be shorter than --ca-validity 10y"},
		{name: "unparsable validity", args: []string{"certs", "init", "--validity", "soon"}, code: ExitUsage, errPart: `invalid duration "soon"`},
		{name: "bad output format", args: []string{"certs", "init", "-o", "xml"}, code: ExitUsage, errPart: `unknown output format "xml"`},
		{name: "list without a cert dir", args: []string{"certs", "list"}, code: ExitFailure,
			errPart: "--cert-dir apictl.local/pki does not exist: create the certificates with apictl certs init"},
		{name: "renew nothing", args: []string{"certs", "renew"}, code: ExitUsage, errPart: "name the certificates to renew"},
		{name: "renew names and all", args: []string{"certs", "renew", "admin", "--all"}, code: ExitUsage, errPart: "not both"},
		{name: "client without name", args: []string{"certs", "client"}, code: ExitUsage, errPart: "takes one argument, the user's name"},
		{name: "inspect two things", args: []string{"certs", "inspect", "a", "b"}, code: ExitUsage, errPart: "takes one argument"},
		{name: "inspect missing file", args: []string{"certs", "inspect", "missing.crt"}, code: ExitFailure, errPart: "reading missing.crt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := chdirTemp(t)
			code, _, stderr := run(t, false, tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tt.code, stderr)
			}
			if !strings.Contains(stderr, tt.errPart) {
				t.Errorf("stderr %q lacks %q", stderr, tt.errPart)
			}
			if tt.code != ExitOK {
				if entries, _ := os.ReadDir(dir); len(entries) != 0 {
					t.Errorf("a failed run left %v behind", entries)
				}
			}
		})
	}
}

func TestCertsInitOutput(t *testing.T) {
	chdirTemp(t)
	steps := []struct {
		golden string
		args   []string
	}{
		{"certs/init-first.txt", []string{"certs", "init", "--hosts", "10.0.0.5,api.example.com"}},
		{"certs/init-again.txt", []string{"certs", "init", "--hosts", "10.0.0.5,api.example.com"}},
		{"certs/init-new-host.txt", []string{"certs", "init", "--hosts", "10.0.0.5,api.example.com,new.example.com"}},
	}
	for _, s := range steps {
		code, out, stderr := run(t, true, s.args...)
		if code != ExitOK {
			t.Fatalf("%v: exit %d: %s", s.args, code, stderr)
		}
		golden.Check(t, s.golden, stable(out))
	}
	code, out, _ := run(t, false, "certs", "init", "--etcd", "--cert-dir", "pipe")
	if code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	golden.Check(t, "certs/init-pipe.txt", stable(out))
}

func TestCertsInitJSON(t *testing.T) {
	chdirTemp(t)
	code, out, stderr := run(t, false, "certs", "init", "-o", "json", "--advertise-address", "10.0.0.5", "--secure-port", "7443")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var r certs.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if r.ServingCert != filepath.Join("apictl.local", "pki", "apiserver.crt") || len(r.Files) != 13 || r.ServiceAccountPub != filepath.Join("apictl.local", "pki", "sa.pub") || r.Files[1].NotAfter == nil ||
		r.FrontProxyCACert != filepath.Join("apictl.local", "pki", "front-proxy-ca.crt") {
		t.Errorf("report %+v", r)
	}
}

func TestCertsListExpiring(t *testing.T) {
	chdirTemp(t)
	if code, _, stderr := run(t, false, "certs", "init", "--validity", "1h"); code != ExitOK {
		t.Fatalf("init: %s", stderr)
	}
	code, out, stderr := run(t, false, "certs", "list", "-o", "json")
	if code != ExitFailure {
		t.Errorf("exit %d, want 1 for expiring certificates", code)
	}
	var l struct {
		Certificates []struct {
			Name            string    `json:"name"`
			Path            string    `json:"path"`
			Status          string    `json:"status"`
			ResidualSeconds int64     `json:"residualSeconds"`
			NotAfter        time.Time `json:"notAfter"`
			Subject         string    `json:"subject"`
			Issuer          string    `json:"issuer"`
			SANs            []string  `json:"sans"`
			Usages          []string  `json:"usages"`
			KeyAlgorithm    string    `json:"keyAlgorithm"`
			IsCA            *bool     `json:"isCA"`
		} `json:"certificates"`
	}
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	statuses := map[string]string{}
	for _, c := range l.Certificates {
		statuses[c.Name] = c.Status
		if c.Path == "" || c.Subject == "" || c.Issuer == "" || c.Usages == nil || c.SANs == nil || c.KeyAlgorithm != "ecdsa-p256" || c.IsCA == nil || c.NotAfter.IsZero() {
			t.Errorf("%s lacks a field: %+v", c.Name, c)
		}
		if c.IsCA != nil && !*c.IsCA && (c.ResidualSeconds > 3600 || c.ResidualSeconds < 3000) {
			t.Errorf("%s residual %ds, want about an hour", c.Name, c.ResidualSeconds)
		}
	}
	want := map[string]string{"ca": "ok", "apiserver": "expiring", "admin": "expiring", "admin.kubeconfig": "expiring"}
	for name, status := range want {
		if statuses[name] != status {
			t.Errorf("%s: status %q, want %q", name, statuses[name], status)
		}
	}
	if !regexp.MustCompile(`apiserver \(apictl.local/pki/apiserver.crt\): expiring: expires in \d+m, within --warn-within 30d`).MatchString(stderr) {
		t.Errorf("stderr does not say why:\n%s", stderr)
	}
	if code, _, _ := run(t, false, "certs", "check-expiration", "--warn-within", "30m"); code != ExitOK {
		t.Errorf("check-expiration with a 30m window: exit %d, want 0", code)
	}
}

func TestCertsRenewOutput(t *testing.T) {
	chdirTemp(t)
	if code, _, stderr := run(t, false, "certs", "init", "--etcd"); code != ExitOK {
		t.Fatalf("init: %s", stderr)
	}
	for _, step := range []struct {
		golden string
		args   []string
	}{
		{"certs/renew-apiserver.txt", []string{"certs", "renew", "apiserver", "--hosts", "new.example.com"}},
		{"certs/renew-admin-etcd.txt", []string{"certs", "renew", "admin", "etcd/server", "apiserver-etcd-client"}},
		{"certs/renew-ca.txt", []string{"certs", "renew", "ca", "--yes"}},
	} {
		code, out, stderr := run(t, true, step.args...)
		if code != ExitOK {
			t.Fatalf("%v: exit %d: %s", step.args, code, stderr)
		}
		golden.Check(t, step.golden, stable(out))
	}
	code, _, stderr := run(t, false, "certs", "renew", "etcd/ca")
	if code != ExitFailure || !strings.Contains(stderr, "renewing it needs --yes (apictl certs renew etcd/ca --yes)") {
		t.Errorf("CA without --yes: exit %d: %s", code, stderr)
	}
}

func TestCertsClientAndInspect(t *testing.T) {
	chdirTemp(t)
	if code, _, stderr := run(t, false, "certs", "init"); code != ExitOK {
		t.Fatalf("init: %s", stderr)
	}
	code, out, stderr := run(t, true, "certs", "client", "jane", "--groups", "dev,ops", "--server", "https://api.example.com:6443")
	if code != ExitOK {
		t.Fatalf("client: exit %d: %s", code, stderr)
	}
	golden.Check(t, "certs/client.txt", stable(out))

	code, out, stderr = run(t, false, "certs", "inspect", "apictl.local/pki/jane.crt", "--ca-file", "apictl.local/pki/ca.crt")
	if code != ExitOK {
		t.Fatalf("inspect: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"Subject:              CN=jane,O=dev+O=ops", "Verification:         ok, against apictl.local/pki/ca.crt", "Usages:               digital signature, client auth"} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect output lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = run(t, false, "certs", "inspect", "apictl.local/pki/jane.crt", "--ca-file", "apictl.local/pki/apiserver.crt", "-o", "json")
	if code != ExitFailure || !strings.Contains(out, `"verified": false`) {
		t.Errorf("inspect against a wrong CA: exit %d, want 1, and the report:\n%s", code, out)
	}
}

func TestCertsReadServeEnvironment(t *testing.T) {
	chdirTemp(t)
	t.Setenv("APICTL_DATA_DIR", "var/apictl")
	t.Setenv("APICTL_SECURE_PORT", "7443")
	if code, _, stderr := run(t, false, "certs", "init"); code != ExitOK {
		t.Fatalf("init: %s", stderr)
	}
	data, err := os.ReadFile(filepath.Join("var", "apictl", "pki", "admin.kubeconfig"))
	if err != nil || !strings.Contains(string(data), "server: https://127.0.0.1:7443") {
		t.Errorf("kubeconfig from the environment's data dir and port: %v\n%s", err, data)
	}
	if code, _, _ := run(t, false, "certs", "list"); code != ExitOK {
		t.Error("list does not look in APICTL_DATA_DIR")
	}
	if code, _, _ := run(t, false, "certs", "list", "--data-dir", "elsewhere"); code != ExitFailure {
		t.Error("--data-dir does not win over APICTL_DATA_DIR")
	}
	t.Setenv("APICTL_SECURE_PORT", "many")
	if code, _, stderr := run(t, false, "certs", "init"); code != ExitFailure || !strings.Contains(stderr, `environment variable APICTL_SECURE_PORT="many" is invalid for --secure-port`) {
		t.Errorf("bad environment value: exit %d: %s", code, stderr)
	}
}

func TestCertsComplete(t *testing.T) {
	chdirTemp(t)
	if code, _, stderr := run(t, false, "certs", "init", "--etcd"); code != ExitOK {
		t.Fatalf("init: %s", stderr)
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"__complete", "certs", "init", "--key-algorithm", ""}, "ecdsa-p256\necdsa-p384\nrsa-2048\nrsa-3072\nrsa-4096\ned25519\n"},
		{[]string{"__complete", "certs", "list", "-o", ""}, "table\nwide\njson\nyaml\n"},
		{[]string{"__complete", "certs", "renew", ""}, "ca\netcd/ca\nfront-proxy-ca\nadmin\napiserver\napiserver-etcd-client\netcd/peer\netcd/server\nfront-proxy-client\n"},
	}
	for _, tt := range tests {
		code, out, _ := run(t, false, tt.args...)
		if code != ExitOK || !strings.HasPrefix(out, tt.want) {
			t.Errorf("%v: exit %d, completions %q, want prefix %q", tt.args, code, out, tt.want)
		}
	}
}

func TestCertsHelp(t *testing.T) {
	for _, cmd := range []string{"init", "list", "renew", "client", "inspect"} {
		code, out, _ := run(t, false, "certs", cmd, "--help")
		if code != ExitOK {
			t.Fatalf("%s --help: exit %d", cmd, code)
		}
		golden.Check(t, "certs/help-"+cmd+".txt", out)
	}
}
