package flags

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func writeECKey(t *testing.T, dir, name string) string {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestServiceAccountValidate(t *testing.T) {
	dir := t.TempDir()
	key := writeECKey(t, dir, "sa.key")
	junk := filepath.Join(dir, "junk")
	if err := os.WriteFile(junk, []byte("no keys here"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		set  func(o *ServiceAccountOptions)
		want []string
	}{
		{"defaults", func(*ServiceAccountOptions) {}, nil},
		{"complete", func(o *ServiceAccountOptions) {
			o.Issuers, o.KeyFiles, o.SigningKeyFile = []string{"https://a.example", "b"}, []string{key}, key
		}, nil},
		{"issuer twice and empty", func(o *ServiceAccountOptions) {
			o.Issuers, o.KeyFiles, o.SigningKeyFile = []string{"api", "api", ""}, []string{key}, key
		}, []string{"--service-account-issuer api is already specified", "--service-account-issuer should not be an empty string"}},
		{"issuer with a colon that is no URL", func(o *ServiceAccountOptions) {
			o.Issuers, o.KeyFiles, o.SigningKeyFile = []string{"http://a b:x"}, []string{key}, key
		}, []string{`--service-account-issuer "http://a b:x" contained a ':' but was not a valid URL`}},
		{"key file alone", func(o *ServiceAccountOptions) { o.KeyFiles = []string{key} }, []string{
			"--service-account-issuer is a required flag when --service-account-key-file or --service-account-signing-key-file is given",
			"--service-account-signing-key-file is missing: --service-account-signing-key-file, --service-account-issuer, and --api-audiences should be specified together"}},
		{"issuer alone", func(o *ServiceAccountOptions) { o.Issuers = []string{"api"} }, []string{
			"--service-account-key-file must be set: either `--service-account-key-file` or `--service-account-signing-endpoint` must be set",
			"--service-account-signing-key-file is missing"}},
		{"unusable files", func(o *ServiceAccountOptions) {
			o.Issuers, o.KeyFiles, o.SigningKeyFile = []string{"api"}, []string{junk, filepath.Join(dir, "nope")}, junk
		}, []string{"--service-account-key-file " + junk + " holds no PEM public or private key",
			"--service-account-key-file " + filepath.Join(dir, "nope") + " does not exist: check the path",
			"--service-account-signing-key-file " + junk + " holds no PEM private key"}},
		{"max expiration bounds", func(o *ServiceAccountOptions) { o.MaxTokenExpiration = 59 * time.Minute },
			[]string{"--service-account-max-token-expiration 59m0s must be between 1 hour and 2^32 seconds"}},
		{"jwks uri", func(o *ServiceAccountOptions) { o.JWKSURI = "http://example.com/jwks" },
			[]string{"--service-account-jwks-uri http://example.com/jwks requires https scheme, parsed as: http://example.com/jwks"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := NewServiceAccountOptions()
			tc.set(o)
			errs := o.Validate()
			var got []string
			for _, e := range errs {
				got = append(got, e.Error())
			}
			if len(got) != len(tc.want) {
				t.Fatalf("errors %q, want %d: %q", got, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(got[i], w) {
					t.Errorf("error %d = %q, want prefix %q", i, got[i], w)
				}
			}
		})
	}
}

// TestServiceAccountDefaults: with the bootstrapped PKI the pair in the cert dir signs; with
// --tls-cert-file the serving key signs and nothing is written.
func TestServiceAccountDefaults(t *testing.T) {
	for _, ownPKI := range []bool{false, true} {
		dir := t.TempDir()
		o := NewServerOptions()
		o.Generic.DataDir = dir
		o.SecureServing.BindAddress = "127.0.0.1"
		o.SecureServing.BindPort = freePort(t)
		o.InsecureServing.BindPort = 0
		if ownPKI {
			o.SecureServing.CertFile, o.SecureServing.KeyFile = writePair(t, dir, false)
		}
		if err := o.Complete(); err != nil {
			t.Fatal(err)
		}
		cfg, err := o.Config(context.Background(), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		cfg.SecureServing.Listener.Close()
		tokens := cfg.ServiceAccountTokens
		if tokens == nil || tokens.Issuer.Name() != DefaultServiceAccountIssuer {
			t.Fatalf("own PKI %v: tokens %+v", ownPKI, tokens)
		}
		_, err = os.Stat(filepath.Join(dir, "pki", "sa.key"))
		if ownPKI != os.IsNotExist(err) {
			t.Errorf("own PKI %v: sa.key: %v", ownPKI, err)
		}
		if got := tokens.Audiences(); len(got) != 1 || got[0] != DefaultServiceAccountIssuer {
			t.Errorf("audiences %v, want the issuer", got)
		}
	}
}
