package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// badEncryptionConfig has an aescbc key of 8 bytes; kube's message for it is pinned below.
const badEncryptionConfig = `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- resources: [secrets]
  providers:
  - aescbc:
      keys:
      - name: key1
        secret: MTIzNDU2Nzg=
`

const kubeKeyLengthMessage = `error while parsing file: resources[0].providers[0].aescbc.keys[0].secret: Invalid value: "REDACTED": ` +
	`secret is not of the expected length, got 8, expected one of [16 24 32]`

// TestBadEncryptionConfig: `flags validate` and `serve` refuse a bad --encryption-provider-config
// with kube's message, through the same loader.
func TestBadEncryptionConfig(t *testing.T) {
	dir := chdirTemp(t)
	path := filepath.Join(dir, "encryption.yaml")
	if err := os.WriteFile(path, []byte(badEncryptionConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, _ := run(t, false, "flags", "validate", "--encryption-provider-config", path)
	if code != ExitFailure || !strings.Contains(out, "--encryption-provider-config\t"+path+"\tis invalid: "+kubeKeyLengthMessage) {
		t.Errorf("flags validate: exit %d, output:\n%s\nwant exit 1 with kube's message %q", code, out, kubeKeyLengthMessage)
	}
	code, out, errOut := run(t, false, "serve", "--encryption-provider-config", path, "--data-dir", filepath.Join(dir, "data"),
		"--secure-port", "0", "--insecure-port", "0")
	if code == ExitOK || !strings.Contains(out+errOut, "--encryption-provider-config "+path+" is invalid: "+kubeKeyLengthMessage) {
		t.Errorf("serve: exit %d, output:\n%s%s\nwant a failure with kube's message", code, out, errOut)
	}

	code, out, _ = run(t, false, "flags", "validate", "--encryption-provider-config-automatic-reload")
	if want := "--encryption-provider-config-automatic-reload\t\tmust be set with --encryption-provider-config"; code != ExitFailure || !strings.Contains(out, want) {
		t.Errorf("flags validate: exit %d, output:\n%s\nwant kube's %q", code, out, want)
	}

	good := strings.Replace(badEncryptionConfig, "MTIzNDU2Nzg=", "MTIzNDU2Nzg5MDEyMzQ1Ng==", 1)
	if err := os.WriteFile(path, []byte(good), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, _ = run(t, false, "flags", "validate", "--encryption-provider-config", path, "--encryption-provider-config-automatic-reload")
	if code != ExitOK {
		t.Errorf("flags validate with a good file: exit %d, output:\n%s", code, out)
	}
}
