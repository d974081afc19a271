package flags

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/apictl/apictl/pkg/certs"
	"github.com/apictl/apictl/pkg/serve"
	"github.com/apictl/apictl/pkg/serve/auth/serviceaccount"
)

// DefaultServiceAccountIssuer is the issuer apictl uses when it provides the service-account keys
// itself: kubeadm's.
const DefaultServiceAccountIssuer = "https://kubernetes.default.svc.cluster.local"

// ServiceAccountOptions say how service-account tokens are issued and verified. Given any of
// --service-account-issuer, --service-account-key-file and --service-account-signing-key-file, kube's
// rules apply. Given none, the issuer is DefaultServiceAccountIssuer and the key is apictl's: the pair
// sa.key/sa.pub in --cert-dir when apictl bootstraps the PKI (created as `apictl certs init` would);
// with --tls-cert-file, the serving key --tls-private-key-file, kube's fallback for
// --service-account-key-file, so that a server given its own PKI writes no files (an Ed25519 serving
// key cannot sign tokens: then the pair in --cert-dir is used after all).
type ServiceAccountOptions struct {
	Issuers        []string
	KeyFiles       []string
	SigningKeyFile string
	APIAudiences   []string
	JWKSURI        string
	// MaxTokenExpiration caps TokenRequest lifetimes; 0 means no cap.
	MaxTokenExpiration    time.Duration
	ExtendTokenExpiration bool
	// Lookup is kube's --service-account-lookup. It governs legacy (Secret-based) tokens, which apictl
	// does not accept; bound tokens are always checked against their ServiceAccount, as in kube.
	Lookup bool

	// certDir is where the default pair lives (--cert-dir), and tlsKeyFile the serving key when the
	// user gives one (--tls-private-key-file); ServerOptions.Complete sets both.
	certDir    string
	tlsKeyFile string
}

// NewServiceAccountOptions returns kube's defaults.
func NewServiceAccountOptions() *ServiceAccountOptions {
	return &ServiceAccountOptions{ExtendTokenExpiration: true, Lookup: true}
}

// AddFlags registers the service-account flags; they belong to the authentication section, as in kube.
func (o *ServiceAccountOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringSliceVar(&o.APIAudiences, "api-audiences", o.APIAudiences,
		"Identifiers of the API. The service account token authenticator will validate that tokens used against the API are bound to at least one of these audiences. "+
			"If the --service-account-issuer flag is configured and this flag is not, this field defaults to a single element list containing the issuer URL.")
	fs.StringArrayVar(&o.KeyFiles, "service-account-key-file", o.KeyFiles,
		"File containing PEM-encoded x509 RSA or ECDSA private or public keys, used to verify ServiceAccount tokens. The specified file can contain multiple keys, "+
			"and the flag can be specified multiple times with different files. If no service-account flag is given: --tls-private-key-file when given, else sa.pub in --cert-dir (created when missing).")
	fs.BoolVar(&o.Lookup, "service-account-lookup", o.Lookup,
		"If true, validate ServiceAccount tokens exist in etcd as part of authentication.")
	fs.StringArrayVar(&o.Issuers, "service-account-issuer", o.Issuers,
		"Identifier of the service account token issuer. The issuer will assert this identifier in \"iss\" claim of issued tokens. This value is a string or URI. "+
			"When this flag is specified multiple times, the first is used to generate tokens and all are used to determine which issuers are accepted. "+
			"If no service-account flag is given: "+DefaultServiceAccountIssuer+".")
	fs.StringVar(&o.JWKSURI, "service-account-jwks-uri", o.JWKSURI,
		"Overrides the URI for the JSON Web Key Set in the discovery doc served at /.well-known/openid-configuration. "+
			"This flag is useful if the discovery doc and key set are served to relying parties from a URL other than the API server's external (as auto-detected or overridden with external-hostname).")
	fs.DurationVar(&o.MaxTokenExpiration, "service-account-max-token-expiration", o.MaxTokenExpiration,
		"The maximum validity duration of a token created by the service account token issuer. If an otherwise valid TokenRequest with a validity duration larger than this value is requested, "+
			"a token will be issued with a validity duration of this value.")
	fs.BoolVar(&o.ExtendTokenExpiration, "service-account-extend-token-expiration", o.ExtendTokenExpiration,
		"Turns on projected service account expiration extension during token generation, which helps safe transition from legacy token to bound service account token feature. "+
			"If this flag is enabled, admission injected tokens would be extended up to 1 year to prevent unexpected failure during transition, ignoring value of service-account-max-token-expiration.")
	fs.StringVar(&o.SigningKeyFile, "service-account-signing-key-file", o.SigningKeyFile,
		"Path to the file that contains the current private key of the service account token issuer. The issuer will sign issued ID tokens with this private key. "+
			"If no service-account flag is given: --tls-private-key-file when given, else sa.key in --cert-dir (created when missing).")
}

// usesDefaults says whether the user gave no key or issuer, so that apictl's own pair is used.
func (o *ServiceAccountOptions) usesDefaults() bool {
	return len(o.Issuers) == 0 && len(o.KeyFiles) == 0 && o.SigningKeyFile == ""
}

// Validate checks the flags with kube's messages, and that the key files hold usable keys.
func (o *ServiceAccountOptions) Validate() []error {
	const s = SectionAuthentication
	var errs []error
	seen := map[string]bool{}
	for _, issuer := range o.Issuers {
		switch {
		case strings.Contains(issuer, ":") && !validURL(issuer):
			_, err := url.Parse(issuer)
			errs = append(errs, problemf(s, "service-account-issuer", issuer, "contained a ':' but was not a valid URL: %v", err))
		case issuer == "":
			errs = append(errs, problemf(s, "service-account-issuer", issuer, "should not be an empty string"))
		case seen[issuer]:
			errs = append(errs, problemf(s, "service-account-issuer", issuer, "is already specified"))
		}
		seen[issuer] = true
	}
	if o.JWKSURI != "" {
		if u, err := url.Parse(o.JWKSURI); err != nil {
			errs = append(errs, problemf(s, "service-account-jwks-uri", o.JWKSURI, "must be a valid URL: %v", err))
		} else if u.Scheme != "https" {
			errs = append(errs, problemf(s, "service-account-jwks-uri", o.JWKSURI, "requires https scheme, parsed as: %v", u.String()))
		}
	}
	if o.MaxTokenExpiration != 0 && (o.MaxTokenExpiration < time.Hour || o.MaxTokenExpiration > time.Duration(1<<32)*time.Second) {
		errs = append(errs, problemf(s, "service-account-max-token-expiration", o.MaxTokenExpiration.String(), "must be between 1 hour and 2^32 seconds"))
	}
	if !o.usesDefaults() {
		if len(o.Issuers) == 0 {
			errs = append(errs, problemf(s, "service-account-issuer", "", "is a required flag when --service-account-key-file or --service-account-signing-key-file is given"))
		}
		if len(o.KeyFiles) == 0 {
			errs = append(errs, problemf(s, "service-account-key-file", "", "must be set: either `--service-account-key-file` or `--service-account-signing-endpoint` must be set"))
		}
		if o.SigningKeyFile == "" {
			errs = append(errs, problemf(s, "service-account-signing-key-file", "",
				"is missing: --service-account-signing-key-file, --service-account-issuer, and --api-audiences should be specified together"))
		}
	}
	for _, f := range o.KeyFiles {
		if p := checkReadableFile(s, "service-account-key-file", f); p != nil {
			errs = append(errs, p)
		} else if _, err := serviceaccount.LoadPublicKeys(f); err != nil {
			errs = append(errs, problemf(s, "service-account-key-file", f, "%v", unwrapFileError(err, f)))
		}
	}
	if p := checkReadableFile(s, "service-account-signing-key-file", o.SigningKeyFile); p != nil {
		errs = append(errs, p)
	} else if o.SigningKeyFile != "" {
		if _, err := serviceaccount.LoadSigningKey(o.SigningKeyFile); err != nil {
			errs = append(errs, problemf(s, "service-account-signing-key-file", o.SigningKeyFile, "%v", unwrapFileError(err, o.SigningKeyFile)))
		}
	}
	return errs
}

// Warnings are kube's warnings about a cap that defeats the lifetime extension.
func (o *ServiceAccountOptions) Warnings() []*Problem {
	if !o.ExtendTokenExpiration || o.MaxTokenExpiration == 0 {
		return nil
	}
	var out []*Problem
	if o.MaxTokenExpiration < serviceaccount.WarnOnlyExpirationSeconds*time.Second {
		out = append(out, problemf(SectionAuthentication, "service-account-max-token-expiration", o.MaxTokenExpiration.String(),
			"is shorter than %d seconds while service-account-extend-token-expiration is true: the safe transition logic cannot trigger", serviceaccount.WarnOnlyExpirationSeconds))
	}
	return out
}

func validURL(s string) bool {
	_, err := url.Parse(s)
	return err == nil
}

// unwrapFileError drops the "path: " the loaders put before their message, since the problem
// already names the file.
func unwrapFileError(err error, path string) error {
	if msg, ok := strings.CutPrefix(err.Error(), path+": "); ok {
		return errors.New(msg)
	}
	return err
}

// config resolves the options into the server's token configuration, loading the keys; with no
// key or issuer flags it uses (and if need be creates) the pair in the cert dir.
func (o *ServiceAccountOptions) config(ctx context.Context, cfg *serve.Config) (serviceaccount.Config, error) {
	sc := serviceaccount.Config{Issuers: o.Issuers, Audiences: o.APIAudiences, JWKSURI: o.JWKSURI,
		MaxExpiration: o.MaxTokenExpiration, ExtendExpiration: o.ExtendTokenExpiration}
	keyFiles, signingKey := o.KeyFiles, o.SigningKeyFile
	if o.usesDefaults() {
		sc.Issuers = []string{DefaultServiceAccountIssuer}
		keyFiles, signingKey = []string{certs.ServiceAccountPubPath(o.certDir)}, certs.ServiceAccountKeyPath(o.certDir)
		if o.tlsKeyFile != "" {
			if _, err := serviceaccount.LoadSigningKey(o.tlsKeyFile); err == nil {
				keyFiles, signingKey = []string{o.tlsKeyFile}, o.tlsKeyFile
			} else {
				cfg.Logger.Warn("the serving key cannot sign service-account tokens: using the pair in --cert-dir", "err", err)
			}
		}
		if signingKey != o.tlsKeyFile {
			if err := ensureServiceAccountPair(ctx, o.certDir, cfg); err != nil {
				return sc, err
			}
		}
	}
	for _, f := range keyFiles {
		keys, err := serviceaccount.LoadPublicKeys(f)
		if err != nil {
			return sc, err
		}
		sc.Keys = append(sc.Keys, keys...)
	}
	key, err := serviceaccount.LoadSigningKey(signingKey)
	if err != nil {
		return sc, err
	}
	sc.SigningKey = key
	return sc, nil
}

// ensureServiceAccountPair creates sa.key/sa.pub in dir when the secure port's bootstrap has not
// (a --tls-cert-file server still gets apictl's own service-account pair).
func ensureServiceAccountPair(ctx context.Context, dir string, cfg *serve.Config) error {
	if _, err := os.Stat(certs.ServiceAccountKeyPath(dir)); err == nil {
		if _, err := os.Stat(certs.ServiceAccountPubPath(dir)); err == nil {
			return nil
		}
	}
	report, err := certs.EnsureServiceAccount(ctx, dir)
	if err != nil {
		return fmt.Errorf("creating the service-account key pair in %s: %w", dir, err)
	}
	logPKIReport(cfg.Logger, report)
	return nil
}

// ApplyTo builds the server's service-account tokens.
func (o *ServiceAccountOptions) ApplyTo(ctx context.Context, cfg *serve.Config) error {
	sc, err := o.config(ctx, cfg)
	if err != nil {
		return err
	}
	tokens, err := serviceaccount.NewTokens(sc)
	if err != nil {
		return err
	}
	cfg.ServiceAccountTokens = tokens
	return nil
}
