package flags

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writePair writes a self-signed certificate and its key, or with mismatch a key of another pair.
func writePair(t *testing.T, dir string, mismatch bool) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	if mismatch {
		if key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
			t.Fatal(err)
		}
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	writeFile(t, certFile, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})))
	writeFile(t, keyFile, string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})))
	return certFile, keyFile
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestValidate(t *testing.T) {
	dir := t.TempDir()
	goodCert, goodKey := writePair(t, dir, false)
	otherDir := t.TempDir()
	badCert, badKey := writePair(t, otherDir, true)
	tokens := filepath.Join(dir, "tokens.csv")
	writeFile(t, tokens, "abc,alice,1,\"dev,ops\"\n")
	badTokens := filepath.Join(dir, "bad-tokens.csv")
	writeFile(t, badTokens, "abc,alice,1\nonlytoken\n")
	notCA := filepath.Join(dir, "not-ca.pem")
	writeFile(t, notCA, "hello")
	damagedKey := filepath.Join(dir, "damaged.key")
	writeFile(t, damagedKey, string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte("not DER")})))

	tests := []struct {
		name   string
		modify func(o *ServerOptions)
		// want holds "flag: substring of the problem" for every expected problem, in order.
		want []string
	}{
		{name: "defaults are valid", modify: func(*ServerOptions) {}},
		{name: "ports out of range", modify: func(o *ServerOptions) {
			o.SecureServing.BindPort = 70000
			o.InsecureServing.BindPort = -1
		}, want: []string{"secure-port: must be between 0 and 65535", "insecure-port: must be between 0 and 65535"}},
		{name: "ports turned off", modify: func(o *ServerOptions) {
			o.SecureServing.BindPort = 0
			o.InsecureServing.BindPort = 0
		}},
		{name: "same port on overlapping addresses", modify: func(o *ServerOptions) {
			o.InsecureServing.BindPort = 6443
		}, want: []string{"insecure-port: is also the --secure-port on an overlapping address"}},
		{name: "same port on different addresses", modify: func(o *ServerOptions) {
			o.SecureServing.BindAddress = "10.0.0.1"
			o.InsecureServing.BindPort = 6443
		}},
		{name: "bad addresses", modify: func(o *ServerOptions) {
			o.Generic.AdvertiseAddress = "example.com"
			o.SecureServing.BindAddress = "1.2.3"
			o.InsecureServing.BindAddress = "localhost"
		}, want: []string{"advertise-address: is not an IP address", "bind-address: is not an IP address", "insecure-bind-address: is not an IP address"}},
		{name: "negative limits and durations", modify: func(o *ServerOptions) {
			o.Generic.MaxRequestsInFlight = -1
			o.Generic.MaxMutatingRequestsInFlight = -2
			o.Generic.RequestTimeout = 0
			o.Generic.MinRequestTimeout = -5
			o.Generic.MaxRequestBodyBytes = -1
			o.Generic.ShutdownDelayDuration = -time.Second
			o.Generic.ShutdownTimeout = -time.Second
			o.Generic.LivezGracePeriod = -time.Second
			o.Generic.StorageInitializationTimeout = -time.Second
			o.Generic.EventTTL = 0
			o.Etcd.CompactionInterval = -time.Minute
			o.Etcd.HealthcheckTimeout = 0
			o.SecureServing.HTTP2MaxStreamsPerConnection = -1
			o.Logs.Verbosity = -1
		}, want: []string{
			"max-requests-inflight: can not be negative", "max-mutating-requests-inflight: can not be negative",
			"request-timeout: must be greater than zero", "min-request-timeout: can not be negative",
			"storage-initialization-timeout: can not be negative", "max-request-body-bytes: can not be negative", "shutdown-delay-duration: can not be negative",
			"shutdown-timeout: can not be negative", "livez-grace-period: can not be negative",
			"event-ttl: must be greater than zero", "etcd-compaction-interval: can not be negative",
			"etcd-healthcheck-timeout: must be greater than zero", "http2-max-streams-per-connection: can not be negative",
			"v: can not be negative",
		}},
		{name: "memory budget not a quantity", modify: func(o *ServerOptions) {
			o.Generic.MemoryBudget = "2 gigs"
		}, want: []string{"memory-budget: is not a quantity: give bytes with a suffix, such as 2Gi"}},
		{name: "memory budget negative", modify: func(o *ServerOptions) {
			o.Generic.MemoryBudget = "-1Gi"
		}, want: []string{"memory-budget: can not be negative"}},
		{name: "memory budget too small", modify: func(o *ServerOptions) {
			o.Generic.MemoryBudget = "64Mi"
		}, want: []string{"memory-budget: is too small to serve in: give at least 128Mi"}},
		{name: "cors patterns", modify: func(o *ServerOptions) {
			o.Generic.CORSAllowedOrigins = []string{"^https://ok\\.example$", "(", " "}
		}, want: []string{"cors-allowed-origins: is not a valid regular expression", "cors-allowed-origins: has an empty entry"}},
		{name: "feature gates", modify: func(o *ServerOptions) {
			o.Generic.FeatureGates = map[string]string{"Bogus": "true", "WatchList": "maybe"}
		}, want: []string{"feature-gates: unrecognized feature gate: Bogus", "feature-gates: invalid value of WatchList=maybe"}},
		{name: "data dir is a file", modify: func(o *ServerOptions) {
			o.Generic.DataDir = tokens
		}, want: []string{"data-dir: is a file, not a directory"}},
		{name: "etcd servers and tls", modify: func(o *ServerOptions) {
			o.Etcd.Servers = []string{"ftp//x", "https://10.0.0.1:2379", "http://"}
			o.Etcd.CertFile = goodCert
			o.Etcd.CAFile = "/nonexistent/ca.crt"
		}, want: []string{"etcd-servers: must be an http:// or https:// URL", "etcd-servers: must be an http:// or https:// URL",
			"etcd-certfile: and --etcd-keyfile must be given together", "etcd-cafile: does not exist"}},
		{name: "etcd tls without servers", modify: func(o *ServerOptions) {
			o.Etcd.CAFile = goodCert
		}, want: []string{"etcd-servers: must be given with --etcd-cafile"}},
		{name: "etcd prefix", modify: func(o *ServerOptions) { o.Etcd.Prefix = "registry" },
			want: []string{"etcd-prefix: must start with /"}},
		{name: "serving pair ok", modify: func(o *ServerOptions) {
			o.SecureServing.CertFile, o.SecureServing.KeyFile = goodCert, goodKey
		}},
		{name: "serving pair mismatch", modify: func(o *ServerOptions) {
			o.SecureServing.CertFile, o.SecureServing.KeyFile = badCert, badKey
		}, want: []string{"tls-private-key-file: does not go with --tls-cert-file"}},
		// Issue 36: each file is checked on its own first, and a problem names the flag of its file.
		{name: "serving cert is not a certificate", modify: func(o *ServerOptions) {
			o.SecureServing.CertFile, o.SecureServing.KeyFile = notCA, goodKey
		}, want: []string{"tls-cert-file: holds no PEM certificate"}},
		{name: "serving key is not a key", modify: func(o *ServerOptions) {
			o.SecureServing.CertFile, o.SecureServing.KeyFile = goodCert, notCA
		}, want: []string{"tls-private-key-file: holds no PEM private key"}},
		{name: "serving cert and key both text", modify: func(o *ServerOptions) {
			o.SecureServing.CertFile, o.SecureServing.KeyFile = notCA, notCA
		}, want: []string{"tls-cert-file: holds no PEM certificate", "tls-private-key-file: holds no PEM private key"}},
		{name: "serving cert given as key", modify: func(o *ServerOptions) {
			o.SecureServing.CertFile, o.SecureServing.KeyFile = goodCert, goodCert
		}, want: []string{"tls-private-key-file: holds a certificate but no private key"}},
		{name: "serving cert and key swapped", modify: func(o *ServerOptions) {
			o.SecureServing.CertFile, o.SecureServing.KeyFile = goodKey, goodCert
		}, want: []string{"tls-cert-file: holds no PEM certificate", "tls-private-key-file: holds a certificate but no private key"}},
		{name: "serving key damaged", modify: func(o *ServerOptions) {
			o.SecureServing.CertFile, o.SecureServing.KeyFile = goodCert, damagedKey
		}, want: []string{"tls-private-key-file: holds a PRIVATE KEY block that is not an RSA, ECDSA or Ed25519 key"}},
		{name: "key without cert", modify: func(o *ServerOptions) {
			o.SecureServing.KeyFile = goodKey
		}, want: []string{"tls-cert-file: must be given with --tls-private-key-file"}},
		{name: "tls versions and suites", modify: func(o *ServerOptions) {
			o.SecureServing.MinTLSVersion = "TLS1.2"
			o.SecureServing.CipherSuites = []string{"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "TLS_NOPE"}
		}, want: []string{"tls-min-version: is not a TLS version", "tls-cipher-suites: is not a cipher suite"}},
		{name: "suites with tls 1.3", modify: func(o *ServerOptions) {
			o.SecureServing.MinTLSVersion = "VersionTLS13"
			o.SecureServing.CipherSuites = []string{"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"}
		}, want: []string{"tls-cipher-suites: cannot be set when --tls-min-version is VersionTLS13"}},
		{name: "authentication files", modify: func(o *ServerOptions) {
			o.Authentication.ClientCAFile = notCA
			o.Authentication.TokenAuthFile = badTokens
		}, want: []string{"client-ca-file: holds no PEM certificate", "token-auth-file: line 2: want token,user,uid"}},
		{name: "authentication files ok", modify: func(o *ServerOptions) {
			o.Authentication.ClientCAFile = goodCert
			o.Authentication.TokenAuthFile = tokens
		}},
		{name: "authorization modes", modify: func(o *ServerOptions) {
			o.Authorization.Modes = []string{"Foo", "ABAC", "ABAC"}
		}, want: []string{"authorization-mode: is not a valid mode", "authorization-mode: has mode ABAC specified more than once",
			"authorization-policy-file: must be given with --authorization-mode ABAC"}},
		{name: "RBAC", modify: func(o *ServerOptions) { o.Authorization.Modes = []string{"RBAC"} }},
		{name: "RBAC in a list", modify: func(o *ServerOptions) { o.Authorization.Modes = []string{"RBAC", "AlwaysDeny"} }},
		{name: "RBAC twice", modify: func(o *ServerOptions) { o.Authorization.Modes = []string{"RBAC", "RBAC"} },
			want: []string{"authorization-mode: has mode RBAC specified more than once"}},
		{name: "ABAC policy that does not parse", modify: func(o *ServerOptions) {
			o.Authorization.Modes = []string{"ABAC"}
			o.Authorization.PolicyFile = badTokens
		}, want: []string{"authorization-policy-file: line 1: not a policy object"}},
		{name: "no authorization mode", modify: func(o *ServerOptions) { o.Authorization.Modes = nil },
			want: []string{"authorization-mode: needs at least one mode"}},
		{name: "policy file without ABAC", modify: func(o *ServerOptions) { o.Authorization.PolicyFile = "/nonexistent" },
			want: []string{"authorization-policy-file: cannot be given without --authorization-mode ABAC", "authorization-policy-file: does not exist"}},
		{name: "runtime config syntax", modify: func(o *ServerOptions) {
			o.APIEnablement.RuntimeConfig = map[string]string{
				"api/all": "", "api/legacy": "", "apps/v1": "nope", "apps": "true", "apps/v1/Deployments": "false", "v1": "",
			}
		}, want: []string{"runtime-config: has an invalid value api/all=", "runtime-config: has an invalid key apps/v1/Deployments",
			"runtime-config: has an invalid value of apps/v1: nope", "runtime-config: has an invalid key apps:"}},
		{name: "only api/all=false", modify: func(o *ServerOptions) {
			o.APIEnablement.RuntimeConfig = map[string]string{"api/all": "false"}
		}, want: []string{"runtime-config: is an invalid key with only api/all=false", ": --runtime-config=api/all=false conflicts with --enable-priority-and-fairness=true"}},
		{name: "api config missing", modify: func(o *ServerOptions) { o.APIEnablement.APIConfig = []string{"/nonexistent/crds"} },
			want: []string{"api-config: does not exist"}},
		{name: "priority and fairness without its API", modify: func(o *ServerOptions) {
			o.APIEnablement.RuntimeConfig = map[string]string{"api/ga": "false", "api/all": "true"}
		}, want: []string{": --runtime-config=api/ga=false conflicts with --enable-priority-and-fairness=true"}},
		{name: "priority and fairness with its API turned back on", modify: func(o *ServerOptions) {
			o.APIEnablement.RuntimeConfig = map[string]string{"api/all": "false", "flowcontrol.apiserver.k8s.io/v1": "true", "/v1": "true"}
		}},
		{name: "no priority and fairness without its API", modify: func(o *ServerOptions) {
			o.Features.EnablePriorityAndFairness = false
			o.APIEnablement.RuntimeConfig = map[string]string{"flowcontrol.apiserver.k8s.io/v1": "false"}
		}},
		{name: "priority and fairness without concurrency", modify: func(o *ServerOptions) {
			o.Generic.MaxRequestsInFlight, o.Generic.MaxMutatingRequestsInFlight = 0, 0
		}, want: []string{": invalid configuration: MaxRequestsInFlight=0 and MaxMutatingRequestsInFlight=0; they must add up to something positive"}},
		{name: "log format", modify: func(o *ServerOptions) { o.Logs.Format = "xml" },
			want: []string{"log-format: is not a log format"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewServerOptions()
			o.Generic.DataDir = t.TempDir()
			tt.modify(o)
			if err := o.Complete(); err != nil {
				t.Fatal(err)
			}
			got := Problems(SectionGeneric, o.Validate())
			if len(got) != len(tt.want) {
				t.Fatalf("got %d problems, want %d:\n%s", len(got), len(tt.want), describeProblems(got))
			}
			for i, want := range tt.want {
				flag, msg, _ := strings.Cut(want, ": ")
				if got[i].Flag != flag || !strings.Contains(got[i].Message, msg) {
					t.Errorf("problem %d = %v, want --%s ... %s", i, got[i], flag, msg)
				}
				if got[i].Section == "" {
					t.Errorf("problem %d has no section: %v", i, got[i])
				}
			}
		})
	}
}

func describeProblems(ps []*Problem) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString("  " + p.Error() + "\n")
	}
	return b.String()
}

func TestCompleteRuntimeConfigCoreGroup(t *testing.T) {
	o := NewAPIEnablementOptions()
	o.RuntimeConfig = map[string]string{"v1": "false", "api/v1": "", "api/legacy": "", "apps/v1": "true"}
	if err := o.Complete(); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"/v1": "", "apps/v1": "true"}
	if len(o.RuntimeConfig) != len(want) || o.RuntimeConfig["apps/v1"] != "true" {
		t.Errorf("RuntimeConfig = %v, want keys of %v", o.RuntimeConfig, want)
	}
	if _, ok := o.RuntimeConfig["/v1"]; !ok {
		t.Errorf("core group not rewritten to /v1: %v", o.RuntimeConfig)
	}
}

func TestCompleteDerivedSettings(t *testing.T) {
	o := NewServerOptions()
	o.Generic.DataDir = "rel"
	o.SecureServing.BindAddress = "10.1.2.3"
	o.Authorization.Modes = []string{ModeAlwaysAllow}
	if err := o.Complete(); err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(o.Generic.DataDir) {
		t.Errorf("data dir not absolute: %s", o.Generic.DataDir)
	}
	if o.SecureServing.CertDir != filepath.Join(o.Generic.DataDir, "pki") {
		t.Errorf("cert dir = %s", o.SecureServing.CertDir)
	}
	if o.Generic.AdvertiseAddress != "10.1.2.3" {
		t.Errorf("advertise address = %q, want the specific bind address", o.Generic.AdvertiseAddress)
	}
	if o.Authentication.Anonymous {
		t.Errorf("anonymous auth left on with AlwaysAllow")
	}
	for _, w := range o.Warnings() {
		if w.Flag == "anonymous-auth" {
			t.Errorf("a default that quietly yields should not warn: %v", w)
		}
	}
}

// TestAlwaysAllowWarning pins issue 36: RBAC is the default, and AlwaysAllow on a secure port other
// machines may reach is allowed but warned about, by serve and `flags validate` alike.
func TestAlwaysAllowWarning(t *testing.T) {
	tests := []struct {
		name        string
		modes       []string // nil keeps the default
		bind        string
		securePort  int
		wantWarning bool
	}{
		{name: "default RBAC on all interfaces", bind: "0.0.0.0", securePort: 6443},
		{name: "AlwaysAllow on all interfaces", modes: []string{ModeAlwaysAllow}, bind: "0.0.0.0", securePort: 6443, wantWarning: true},
		{name: "AlwaysAllow on all IPv6 interfaces", modes: []string{ModeAlwaysAllow}, bind: "::", securePort: 6443, wantWarning: true},
		{name: "AlwaysAllow on a routable address", modes: []string{ModeAlwaysAllow}, bind: "10.1.2.3", securePort: 6443, wantWarning: true},
		{name: "AlwaysAllow after RBAC still allows all", modes: []string{ModeRBAC, ModeAlwaysAllow}, bind: "0.0.0.0", securePort: 6443, wantWarning: true},
		{name: "AlwaysAllow on loopback", modes: []string{ModeAlwaysAllow}, bind: "127.0.0.1", securePort: 6443},
		{name: "AlwaysAllow on IPv6 loopback", modes: []string{ModeAlwaysAllow}, bind: "::1", securePort: 6443},
		{name: "AlwaysAllow with the secure port off", modes: []string{ModeAlwaysAllow}, bind: "0.0.0.0", securePort: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewServerOptions()
			if got := o.Authorization.Modes; len(got) != 1 || got[0] != ModeRBAC {
				t.Fatalf("default --authorization-mode = %v, want [RBAC]", got)
			}
			if tt.modes != nil {
				o.Authorization.Modes = tt.modes
			}
			o.SecureServing.BindAddress = tt.bind
			o.SecureServing.BindPort = tt.securePort
			if err := o.Complete(); err != nil {
				t.Fatal(err)
			}
			var got []*Problem
			for _, w := range o.Warnings() {
				if w.Flag == "authorization-mode" {
					got = append(got, w)
				}
			}
			if (len(got) == 1) != tt.wantWarning || len(got) > 1 {
				t.Fatalf("authorization warnings = %v, want one: %v", got, tt.wantWarning)
			}
			if tt.wantWarning && !strings.Contains(got[0].Error(), "--bind-address "+tt.bind+" is not a loopback address") {
				t.Errorf("warning %q does not name the bind address %s", got[0], tt.bind)
			}
		})
	}
}
