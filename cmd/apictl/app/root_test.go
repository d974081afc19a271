package app

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/apictl/apictl/internal/golden"
)

func TestExitCodes(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		code    int
		errPart string
	}{
		{name: "help", args: []string{"--help"}, code: ExitOK},
		{name: "no command prints help", args: []string{}, code: ExitOK}, // nil would make cobra read os.Args
		{name: "unknown command", args: []string{"srve"}, code: ExitUsage, errPart: "Did you mean this?\n\tserve"},
		{name: "unknown flag", args: []string{"flags", "list", "--nope"}, code: ExitUsage, errPart: "unknown flag: --nope"},
		{name: "unknown subcommand", args: []string{"flags", "lst"}, code: ExitUsage, errPart: `unknown command "lst" for "apictl flags"`},
		{name: "stray argument", args: []string{"version", "x"}, code: ExitUsage, errPart: `"apictl version" takes no arguments`},
		{name: "bad output format", args: []string{"flags", "validate", "-o", "xml"}, code: ExitUsage, errPart: `unknown output format "xml"`},
		{name: "bad flag value", args: []string{"flags", "validate", "--secure-port", "x"}, code: ExitUsage, errPart: "--secure-port"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chdirTemp(t)
			code, _, stderr := run(t, false, tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tt.code, stderr)
			}
			if !strings.Contains(stderr, tt.errPart) {
				t.Errorf("stderr %q lacks %q", stderr, tt.errPart)
			}
			if tt.code == ExitUsage && !strings.Contains(stderr, "--help' for usage.") {
				t.Errorf("usage error without a pointer to --help: %q", stderr)
			}
			// Issue 36: kubectl's "error: " and no other spelling.
			if tt.code != ExitOK && !strings.HasPrefix(stderr, "error: ") {
				t.Errorf("stderr does not start with \"error: \": %q", stderr)
			}
		})
	}
	chdirTemp(t)
	_, _, stderr := run(t, false, "srve")
	golden.Check(t, "errors/unknown-command.txt", stderr)
}

func TestServeValidatesBeforeAnythingElse(t *testing.T) {
	chdirTemp(t)
	code, _, stderr := run(t, false, "serve", "--secure-port", "70000", "--log-format", "xml")
	if code != ExitFailure {
		t.Fatalf("exit %d, want 1", code)
	}
	for _, want := range []string{"error: secure serving: --secure-port 70000 must be between 0 and 65535", "error: logs: --log-format xml", "2 error(s)"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

func TestServeRunsWithCheckedOptions(t *testing.T) {
	chdirTemp(t)
	var got *serveRun
	cmd := newServeCmd(Streams{Out: io.Discard, ErrOut: io.Discard}, func(_ context.Context, r *serveRun) error { got = r; return nil })
	cmd.SetArgs([]string{"--secure-port", "7443", "--insecure-port", "0"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got == nil || got.options.SecureServing.BindPort != 7443 || got.options.InsecureServing.BindPort != 0 {
		t.Fatalf("run function got %+v", got)
	}
	if got.options.SecureServing.CertDir == "" {
		t.Errorf("options reached the run function uncompleted")
	}
}

func TestVersionJSON(t *testing.T) {
	code, out, _ := run(t, false, "version", "-o", "json")
	var v map[string]string
	if code != ExitOK || json.Unmarshal([]byte(out), &v) != nil {
		t.Fatalf("exit %d, output %q", code, out)
	}
	for _, key := range []string{"gitVersion", "gitCommit", "buildDate", "goVersion", "platform", "major", "minor"} {
		if _, ok := v[key]; !ok {
			t.Errorf("version JSON lacks %q: %s", key, out)
		}
	}
}
