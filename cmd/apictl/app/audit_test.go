package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBadAuditPolicy: `flags validate` and `serve` refuse a bad --audit-policy-file with kube's
// validation messages, through the loader the server uses.
func TestBadAuditPolicy(t *testing.T) {
	dir := chdirTemp(t)
	tests := []struct {
		name, policy, want string
	}{{
		name: "unknown level",
		policy: `apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: Everything
`,
		want: `rules[0].level: Unsupported value: "Everything": supported values: "None", "Metadata", "Request", "RequestResponse"`,
	}, {
		name: "resources and non-resource URLs in one rule, a bad stage",
		policy: `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [Started]
rules:
- level: Metadata
  resources: [{group: ""}]
  nonResourceURLs: ["/metrics"]
`,
		want: `[omitStages[0]: Invalid value: "Started": allowed stages are RequestReceived,ResponseStarted,ResponseComplete,Panic, rules[0].nonResourceURLs: Invalid value: ["/metrics"]: rules cannot apply to both regular resources and non-resource URLs]`,
	}, {
		name:   "no rules",
		policy: "apiVersion: audit.k8s.io/v1\nkind: Policy\n",
		want:   "loaded illegal policy with 0 rules",
	}, {
		name:   "not a policy",
		policy: "apiVersion: v1\nkind: ConfigMap\n",
		want:   `failed decoding: no kind "ConfigMap" is registered for version "v1" in scheme`,
	}}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, "policy"+string(rune('a'+i))+".yaml")
			if err := os.WriteFile(path, []byte(tt.policy), 0o600); err != nil {
				t.Fatal(err)
			}
			code, out, _ := run(t, false, "flags", "validate", "--audit-policy-file", path)
			if want := "--audit-policy-file\t" + path + "\tis not a valid audit policy: " + tt.want; code != ExitFailure || !strings.Contains(out, want) {
				t.Errorf("flags validate: exit %d, output:\n%s\nwant exit 1 with %q", code, out, want)
			}
			code, out, errOut := run(t, false, "serve", "--audit-policy-file", path, "--audit-log-path", filepath.Join(dir, "audit.log"),
				"--data-dir", filepath.Join(dir, "data"), "--secure-port", "0", "--insecure-port", "0")
			if want := "--audit-policy-file " + path + " is not a valid audit policy: " + tt.want; code == ExitOK || !strings.Contains(out+errOut, want) {
				t.Errorf("serve: exit %d, output:\n%s%s\nwant a failure with %q", code, out, errOut, want)
			}
		})
	}

	code, out, _ := run(t, false, "flags", "validate", "--audit-log-format", "legacy", "--audit-log-maxsize", "-1")
	for _, want := range []string{"--audit-log-format\tlegacy\tis not supported by apictl: use json", "--audit-log-maxsize\t-1\tcan't be a negative number"} {
		if code != ExitFailure || !strings.Contains(out, want) {
			t.Errorf("flags validate: exit %d, output:\n%s\nwant %q", code, out, want)
		}
	}
}
