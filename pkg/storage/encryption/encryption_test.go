package encryption_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"log/slog"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	kubeconfig "k8s.io/apiserver/pkg/server/options/encryptionconfig"
	"k8s.io/apiserver/pkg/storage/value"

	"github.com/apictl/apictl/pkg/storage/encryption"
)

// key returns a base64 secret of n bytes, all b: keys for tests only.
func key(b byte, n int) string { return base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{b}, n)) }

// writeConfig writes content to a file of its own and returns the path.
func writeConfig(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "encryption.yaml")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// kubeTransformers loads path with kube-apiserver's own loader.
func kubeTransformers(t *testing.T, path string) value.ResourceTransformers {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cfg, err := kubeconfig.LoadEncryptionConfig(ctx, path, false, "test")
	if err != nil {
		t.Fatalf("kube's loader refused the file: %v", err)
	}
	return kubeconfig.StaticTransformers(cfg.Transformers)
}

const header = "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\n"

// TestLoadErrorsAreKubes runs each bad file through Load and through kube's loader: the messages
// must be the same, word for word.
func TestLoadErrorsAreKubes(t *testing.T) {
	k16, k32 := key(1, 16), key(2, 32)
	cases := []struct {
		name, content string
		// want is a part of the message; the whole message must equal kube's unless apictlOnly.
		want       string
		apictlOnly bool
		// redact is a secret kube prints in its message and apictl does not (it says REDACTED).
		redact string
	}{
		{name: "no resources", content: header + "resources: []\n", want: "resources: Required value: at least one resources is required"},
		{name: "short aescbc key", content: header + `resources:
- resources: [secrets]
  providers:
  - aescbc: {keys: [{name: k1, secret: ` + key(1, 8) + `}]}
`, want: `resources[0].providers[0].aescbc.keys[0].secret: Invalid value: "REDACTED": secret is not of the expected length, got 8, expected one of [16 24 32]`},
		{name: "secretbox key of 16 bytes", content: header + `resources:
- resources: [secrets]
  providers:
  - secretbox: {keys: [{name: k1, secret: ` + k16 + `}]}
`, want: "secret is not of the expected length, got 16, expected one of [32]"},
		{name: "not base64", content: header + `resources:
- resources: [secrets]
  providers:
  - aesgcm: {keys: [{name: k1, secret: "not base64!"}]}
`, want: "secrets must be base64 encoded"},
		{name: "key without name", content: header + `resources:
- resources: [secrets]
  providers:
  - aescbc: {keys: [{secret: ` + k32 + `}]}
`, want: "resources[0].providers[0].aescbc.keys[0].name: Required value: name is a mandatory field for a key"},
		{name: "two providers in one element", content: header + `resources:
- resources: [secrets]
  providers:
  - aescbc: {keys: [{name: k1, secret: ` + k32 + `}]}
    identity: {}
`, want: "more than one provider specified in a single element, should split into different list elements", redact: k32},
		{name: "no provider", content: header + `resources:
- resources: [secrets]
  providers: []
`, want: "resources[0].providers: Required value: at least one resources[0].providers is required"},
		{name: "overlap", content: header + `resources:
- resources: [secrets, "*."]
  providers: [{identity: {}}]
`, want: "using overlapping resources such as 'secrets' and '*.' in the same resource list is not allowed as they will be masked"},
		{name: "star", content: header + `resources:
- resources: ["*"]
  providers: [{identity: {}}]
`, want: "use '*.' to encrypt all the resources from core API group or *.* to encrypt all resources"},
		{name: "capitals and events.k8s.io", content: header + `resources:
- resources: [Secrets, events.events.k8s.io, deployments.extensions, "foo.*"]
  providers: [{identity: {}}]
`, want: "resource name should not contain capital letters"},
		{name: "masked by an earlier wildcard", content: header + `resources:
- resources: ["*.apps"]
  providers: [{identity: {}}]
- resources: [deployments.apps]
  providers: [{aescbc: {keys: [{name: k1, secret: ` + k32 + `}]}}]
`, want: `error while building transformers: resource "deployments.apps" is masked by earlier rule "*.apps"`},
		{name: "unknown field", content: header + `resources:
- resources: [secrets]
  provider: [{identity: {}}]
`, want: `strict decoding error: unknown field "resources[0].provider"`},
		{name: "wrong kind", content: "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\n",
			want: "got unexpected config type: apiserver.config.k8s.io/v1, Kind=AdmissionConfiguration", apictlOnly: true},
		{name: "empty file", content: "", want: "is empty"},
		{name: "kms", content: header + `resources:
- resources: [secrets]
  providers:
  - kms: {apiVersion: v2, name: plugin, endpoint: "unix:///tmp/kms.sock"}
`, want: "resources[0].providers[0].kms: Forbidden: KMS providers are not supported by apictl: use aescbc, aesgcm or secretbox", apictlOnly: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := writeConfig(t, tc.content)
			_, err := encryption.Load(path)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Load: %v\nwant a message containing %q", err, tc.want)
			}
			if tc.apictlOnly {
				return
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			_, kubeErr := kubeconfig.LoadEncryptionConfig(ctx, path, false, "test")
			if kubeErr == nil || kubeErr.Error() != err.Error() && (tc.redact == "" || strings.ReplaceAll(kubeErr.Error(), tc.redact, "REDACTED") != err.Error()) {
				t.Errorf("apictl says\n  %v\nkube says\n  %v", err, kubeErr)
			}
		})
	}
}

// TestAcceptsKubesKinds loads both spellings kube accepts.
func TestAcceptsKubesKinds(t *testing.T) {
	body := "resources:\n- resources: [secrets]\n  providers: [{identity: {}}]\n"
	for _, head := range []string{header, "apiVersion: v1\nkind: EncryptionConfig\n"} {
		if _, err := encryption.Load(writeConfig(t, head+body)); err != nil {
			t.Errorf("%q: %v", head, err)
		}
	}
}

const sample = `{"kind":"Secret","apiVersion":"v1","metadata":{"name":"a","namespace":"default"},"data":{"k":"dg=="}}`

// TestSameFormatAsKube writes with each provider through apictl and reads through kube's transformer
// built from the same file, and the other way round, for resources named directly, by group wildcard
// and by *.*.
func TestSameFormatAsKube(t *testing.T) {
	providers := map[string]string{
		"aescbc":    "aescbc: {keys: [{name: key1, secret: " + key(3, 32) + "}]}",
		"aesgcm":    "aesgcm: {keys: [{name: key1, secret: " + key(4, 16) + "}]}",
		"secretbox": "secretbox: {keys: [{name: key1, secret: " + key(5, 32) + "}]}",
	}
	for name, provider := range providers {
		t.Run(name, func(t *testing.T) {
			path := writeConfig(t, header+`resources:
- resources: [secrets, widgets.example.com]
  providers:
  - `+provider+`
  - identity: {}
- resources: ["*.apps"]
  providers: [{`+provider+`}]
- resources: ["*.*"]
  providers: [{`+provider+`}]
`)
			cfg, err := encryption.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			kube := kubeTransformers(t, path)
			ctx := context.Background()
			for _, gr := range []schema.GroupResource{{Resource: "secrets"}, {Group: "example.com", Resource: "widgets"},
				{Group: "apps", Resource: "deployments"}, {Group: "batch", Resource: "jobs"}} {
				dataCtx := value.DefaultContext("/registry/" + gr.String() + "/default/a")
				ours, theirs := cfg.For(gr), kube.TransformerForResource(gr)
				stored, err := ours.TransformToStorage(ctx, []byte(sample), dataCtx)
				if err != nil {
					t.Fatal(err)
				}
				if want := "k8s:enc:" + name + ":v1:key1:"; !bytes.HasPrefix(stored, []byte(want)) {
					t.Errorf("%s: stored %q, want the prefix %q", gr, stored[:min(len(stored), 40)], want)
				}
				plain, stale, err := theirs.TransformFromStorage(ctx, stored, dataCtx)
				if err != nil || string(plain) != sample || stale {
					t.Errorf("%s: kube read apictl's value as %q, stale %v, %v", gr, plain, stale, err)
				}
				stored, err = theirs.TransformToStorage(ctx, []byte(sample), dataCtx)
				if err != nil {
					t.Fatal(err)
				}
				plain, stale, err = ours.TransformFromStorage(ctx, stored, dataCtx)
				if err != nil || string(plain) != sample || stale {
					t.Errorf("%s: apictl read kube's value as %q, stale %v, %v", gr, plain, stale, err)
				}
			}
			// The identity provider after the key reads data written before encryption, as stale.
			plain, stale, err := cfg.For(schema.GroupResource{Resource: "secrets"}).TransformFromStorage(ctx, []byte(sample), value.DefaultContext("k"))
			if err != nil || string(plain) != sample || !stale {
				t.Errorf("plaintext through [%s, identity]: %q, stale %v, %v; want it, stale", name, plain, stale, err)
			}
		})
	}
}

// TestUnlistedResourcesAreNotEncrypted checks kube's fallback: a resource no list covers is stored
// as it is, and an encrypted value for it does not read.
func TestUnlistedResourcesAreNotEncrypted(t *testing.T) {
	cfg, err := encryption.Load(writeConfig(t, header+`resources:
- resources: [secrets]
  providers: [{aescbc: {keys: [{name: key1, secret: `+key(6, 32)+`}]}}]
`))
	if err != nil {
		t.Fatal(err)
	}
	ctx, dataCtx := context.Background(), value.DefaultContext("k")
	stored, err := cfg.For(schema.GroupResource{Resource: "configmaps"}).TransformToStorage(ctx, []byte(sample), dataCtx)
	if err != nil || string(stored) != sample {
		t.Errorf("configmaps stored as %q, %v; want the plaintext", stored, err)
	}
	encrypted, err := cfg.For(schema.GroupResource{Resource: "secrets"}).TransformToStorage(ctx, []byte(sample), dataCtx)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = cfg.For(schema.GroupResource{Resource: "configmaps"}).TransformFromStorage(ctx, encrypted, dataCtx)
	if err == nil || err.Error() != "identity transformer tried to read encrypted data" {
		t.Errorf("reading encrypted data as a configmap: %v; want kube's identity error", err)
	}
}

// TestTransformerForKeys resolves storage keys to their resource's transformer.
func TestTransformerForKeys(t *testing.T) {
	cfg, err := encryption.Load(writeConfig(t, header+`resources:
- resources: [secrets]
  providers: [{aescbc: {keys: [{name: core, secret: `+key(7, 32)+`}]}}]
- resources: ["*.apps"]
  providers: [{aescbc: {keys: [{name: apps, secret: `+key(8, 32)+`}]}}]
- resources: [widgets.example.com]
  providers: [{aescbc: {keys: [{name: widgets, secret: `+key(9, 32)+`}]}}]
`))
	if err != nil {
		t.Fatal(err)
	}
	served := []schema.GroupResource{{Resource: "secrets"}, {Resource: "configmaps"}, {Group: "apps", Resource: "deployments"}}
	ts := encryption.NewTransformers(cfg, served)
	cases := map[string]string{
		"secrets/default/a":               "k8s:enc:aescbc:v1:core:",
		"secrets/":                        "k8s:enc:aescbc:v1:core:",
		"secrets/apps/a":                  "k8s:enc:aescbc:v1:core:", // a namespace named like a group
		"apps/deployments/default/a":      "k8s:enc:aescbc:v1:apps:",
		"apps/deployments/":               "k8s:enc:aescbc:v1:apps:",
		"apps/statefulsets/default/a":     "k8s:enc:aescbc:v1:apps:", // not served at start: by the group wildcard
		"example.com/widgets/default/a":   "k8s:enc:aescbc:v1:widgets:",
		"configmaps/default/a":            "{",
		"example.com/gadgets/default/a":   "{",
		"storage.k8s.io/storageclasses/a": "{",
	}
	for k, want := range cases {
		out, err := ts.TransformerFor(k).TransformToStorage(context.Background(), []byte(sample), value.DefaultContext(k))
		if err != nil || !bytes.HasPrefix(out, []byte(want)) {
			t.Errorf("TransformerFor(%q) stored %q, %v; want the prefix %q", k, out[:min(len(out), 30)], err, want)
		}
	}
}

// TestReloadKeepsTheOldConfigOnABadFile follows the file: a valid change is taken, a bad one is
// logged and the configuration in force stays.
func TestReloadKeepsTheOldConfigOnABadFile(t *testing.T) {
	withKey := func(name string, b byte) string {
		return header + "resources:\n- resources: [secrets]\n  providers: [{aescbc: {keys: [{name: " + name + ", secret: " + key(b, 32) + "}]}}]\n"
	}
	path := writeConfig(t, withKey("one", 1))
	cfg, err := encryption.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	ts := encryption.NewTransformers(cfg, []schema.GroupResource{{Resource: "secrets"}})
	var logs lockedBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		ts.Reload(ctx, path, 5*time.Millisecond, slog.New(slog.NewTextHandler(&logs, nil)))
	}()
	defer func() { cancel(); <-done }()

	prefixNow := func() string {
		out, err := ts.TransformerFor("secrets/default/a").TransformToStorage(ctx, []byte(sample), value.DefaultContext("k"))
		if err != nil {
			t.Fatal(err)
		}
		// The key names are three letters long: "k8s:enc:aescbc:v1:one:".
		return string(out[:len("k8s:enc:aescbc:v1:one:")])
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 10s; logs:\n%s", what, logs.String())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	// Each version is renamed into place, as a configuration manager does, so that the poll never
	// sees a half-written file.
	replace := func(content string) {
		t.Helper()
		tmp := path + ".new"
		if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	replace(withKey("two", 2))
	waitFor("the new key in force", func() bool { return prefixNow() == "k8s:enc:aescbc:v1:two:" })
	replace(header + "resources: []\n")
	waitFor("the bad file logged", func() bool { return strings.Contains(logs.String(), "at least one resources is required") })
	if got := prefixNow(); got != "k8s:enc:aescbc:v1:two:" {
		t.Errorf("after a bad file the store writes with %q, want the key in force before it", got)
	}
	time.Sleep(50 * time.Millisecond)
	if n := strings.Count(logs.String(), "could not be reloaded"); n != 1 {
		t.Errorf("the bad file was logged %d times, want once:\n%s", n, logs.String())
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
