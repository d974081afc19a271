package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/apictl/apictl/internal/golden"
	"github.com/apictl/apictl/pkg/flags"
)

// The five problems of the foundation issue, reported in one run.
var fiveProblems = []string{
	"--secure-port", "70000", "--insecure-port", "-1", "--etcd-servers", "ftp//x",
	"--authorization-mode", "Foo", "--tls-cert-file", "/nonexistent",
}

func TestFlagsValidateReportsEveryProblem(t *testing.T) {
	chdirTemp(t)
	wantFlags := []string{"secure-port", "insecure-port", "etcd-servers", "authorization-mode", "tls-cert-file"}

	code, out, _ := run(t, true, append([]string{"flags", "validate"}, fiveProblems...)...)
	if code != ExitFailure {
		t.Fatalf("exit %d, want 1", code)
	}
	for _, flag := range wantFlags {
		if !strings.Contains(out, "--"+flag+" ") {
			t.Errorf("table lacks --%s:\n%s", flag, out)
		}
	}
	golden.Check(t, "flags-validate/five-problems.table", out)

	code, out, _ = run(t, false, append([]string{"flags", "validate", "-o", "json"}, fiveProblems...)...)
	if code != ExitFailure {
		t.Fatalf("json: exit %d, want 1", code)
	}
	var report struct {
		Valid  bool
		Errors []flags.Problem
	}
	if err := json.Unmarshal([]byte(out), &report); err != nil {
		t.Fatalf("-o json is not JSON: %v\n%s", err, out)
	}
	got := map[string]bool{}
	for _, p := range report.Errors {
		got[p.Flag] = true
		if p.Section == "" || p.Message == "" {
			t.Errorf("problem without section or message: %+v", p)
		}
	}
	for _, flag := range wantFlags {
		if !got[flag] {
			t.Errorf("JSON lacks a problem for --%s: %s", flag, out)
		}
	}
	if report.Valid {
		t.Errorf("JSON says valid")
	}
}

func TestFlagsValidateOK(t *testing.T) {
	chdirTemp(t)
	code, out, _ := run(t, false, "flags", "validate")
	if code != ExitOK || out != "OK: the configuration is valid\n" {
		t.Errorf("exit %d, output %q", code, out)
	}
}

// TestFlagsValidateWarnsAlwaysAllow pins issue 36: AlwaysAllow is allowed when asked for, but on a
// secure port other machines may reach it is a warning, not an error, so the exit status stays 0.
func TestFlagsValidateWarnsAlwaysAllow(t *testing.T) {
	chdirTemp(t)
	code, out, _ := run(t, true, "flags", "validate", "--authorization-mode", "AlwaysAllow")
	if code != ExitOK {
		t.Fatalf("exit %d, want 0 for a warning:\n%s", code, out)
	}
	golden.Check(t, "flags-validate/always-allow.table", out)

	code, out, _ = run(t, false, "flags", "validate", "--authorization-mode", "AlwaysAllow", "--bind-address", "127.0.0.1")
	if code != ExitOK || out != "OK: the configuration is valid\n" {
		t.Errorf("on loopback: exit %d, output %q", code, out)
	}
}

// TestFlagsValidateBlamesTheBadFile is issue 36's item 8: with a text file for both the certificate
// and the key, each flag is named for its own file, where the pair check blamed the key alone.
func TestFlagsValidateBlamesTheBadFile(t *testing.T) {
	dir := chdirTemp(t)
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# apictl\n\nNot a certificate.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, _ := run(t, true, "flags", "validate", "--tls-cert-file", "README.md", "--tls-private-key-file", "README.md")
	if code != ExitFailure {
		t.Fatalf("exit %d, want 1:\n%s", code, out)
	}
	golden.Check(t, "flags-validate/tls-text-files.table", out)
}

func TestFlagsShowSources(t *testing.T) {
	dir := chdirTemp(t)
	config := filepath.Join(dir, "apictl.yaml")
	if err := os.WriteFile(config, []byte("secure-port: 8443\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		env        string
		args       []string
		wantValue  string
		wantSource string
	}{
		{name: "flag", env: "7443", args: []string{"--secure-port", "9443"}, wantValue: "9443", wantSource: "flag"},
		{name: "environment", env: "7443", wantValue: "7443", wantSource: "environment"},
		{name: "config file", wantValue: "8443", wantSource: "config file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("APICTL_SECURE_PORT", tt.env)
			code, out, stderr := run(t, false, append([]string{"flags", "show", "--config", config}, tt.args...)...)
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			want := "secure serving\t--secure-port\t" + tt.wantValue + "\t" + tt.wantSource + "\n"
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		})
	}
	t.Run("typo in file", func(t *testing.T) {
		if err := os.WriteFile(config, []byte("secure-prot: 8443\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := run(t, false, "flags", "show", "--config", config)
		if code != ExitFailure || !strings.Contains(stderr, `unknown key "secure-prot": did you mean "secure-port"?`) {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
	})
}

func TestServeHelpSections(t *testing.T) {
	code, out, _ := run(t, false, "serve", "--help")
	if code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	var headers []string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasSuffix(line, " flags:") && !strings.HasPrefix(line, " ") {
			headers = append(headers, line)
		}
	}
	want := []string{"Generic flags:", "Etcd flags:", "Secure serving flags:", "Insecure serving flags:", "Auditing flags:", "Features flags:",
		"Authentication flags:", "Authorization flags:", "API enablement flags:", "Logs flags:", "Misc flags:", "Leader election flags:", "Global flags:"}
	if strings.Join(headers, "|") != strings.Join(want, "|") {
		t.Errorf("sections = %q, want %q", headers, want)
	}
	seen := map[string]int{}
	for _, line := range strings.Split(out, "\n") {
		// Flag lines are indented; wrapped descriptions are indented further and Long is not at all.
		if !strings.HasPrefix(line, "      --") && !strings.HasPrefix(line, "  -") {
			continue
		}
		field := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "-v, "))
		seen[strings.SplitN(field[0], "[", 2)[0]]++
	}
	for flag, n := range seen {
		if n != 1 {
			t.Errorf("%s listed %d times", flag, n)
		}
	}
	golden.Check(t, "help/serve.txt", out)
}

func TestFlagsListCoversEveryServeFlag(t *testing.T) {
	code, out, _ := run(t, false, "flags", "list", "-o", "json")
	if code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	var infos []flags.FlagInfo
	if err := json.Unmarshal([]byte(out), &infos); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	listed := map[string]bool{}
	for _, info := range infos {
		listed[info.Flag] = true
		if info.Env != flags.EnvName(info.Flag) || info.Type == "" || info.Section == "" {
			t.Errorf("incomplete entry %+v", info)
		}
	}
	serve := newServeCmd(Streams{}, nil)
	serve.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Name != "help" && !listed[f.Name] {
			t.Errorf("flags list lacks --%s", f.Name)
		}
	})
}

func TestFlagsListFormats(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		terminal bool
	}{
		{name: "table", args: []string{"--section", "secure serving"}, terminal: true},
		{name: "pipe", args: []string{"--section", "etcd"}},
		{name: "markdown", args: []string{"--section", "insecure serving", "-o", "markdown"}},
		{name: "yaml", args: []string{"--section", "logs", "-o", "yaml"}},
		{name: "json", args: []string{"--section", "features", "-o", "json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, stderr := run(t, tt.terminal, append([]string{"flags", "list"}, tt.args...)...)
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			golden.Check(t, "flags-list/"+tt.name+".txt", out)
		})
	}
	code, _, stderr := run(t, false, "flags", "list", "--section", "nope")
	if code != ExitUsage || !strings.Contains(stderr, `unknown section "nope"`) {
		t.Errorf("unknown section: exit %d, stderr %q", code, stderr)
	}
}
