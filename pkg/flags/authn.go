package flags

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"

	"github.com/apictl/apictl/pkg/serve/auth"
)

// AuthenticationOptions say how the secure port learns who is calling.
type AuthenticationOptions struct {
	// ClientCAFile verifies client certificates: user = CN, groups = O.
	ClientCAFile string
	// TokenAuthFile is a CSV of static bearer tokens: token,user,uid,"group1,group2".
	TokenAuthFile string
	// Anonymous lets requests without credentials in as system:anonymous.
	Anonymous bool
	// RequestHeader is front-proxy authentication (--requestheader-*).
	RequestHeader *RequestHeaderOptions
	// ServiceAccounts is service-account token issuing and authentication (--service-account-*).
	ServiceAccounts *ServiceAccountOptions
}

// NewAuthenticationOptions returns kube's defaults.
func NewAuthenticationOptions() *AuthenticationOptions {
	return &AuthenticationOptions{Anonymous: true, RequestHeader: NewRequestHeaderOptions(), ServiceAccounts: NewServiceAccountOptions()}
}

// AddFlags registers the authentication flags with the current values as defaults.
func (o *AuthenticationOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.ClientCAFile, "client-ca-file", o.ClientCAFile,
		"If set, any request presenting a client certificate signed by one of the authorities in the client-ca-file is authenticated with an identity corresponding to the CommonName of the client certificate.")
	fs.StringVar(&o.TokenAuthFile, "token-auth-file", o.TokenAuthFile,
		"If set, the file that will be used to secure the secure port of the API server via token authentication. Lines are CSV: token,user,uid,\"group1,group2\".")
	fs.BoolVar(&o.Anonymous, "anonymous-auth", o.Anonymous,
		"Enables anonymous requests to the secure port of the API server. Requests that are not rejected by another authentication method are treated as anonymous requests. "+
			"Anonymous requests have a username of system:anonymous, and a group name of system:unauthenticated. Turned off when --authorization-mode includes AlwaysAllow.")
	o.RequestHeader.AddFlags(fs)
	o.ServiceAccounts.AddFlags(fs)
}

// Complete has nothing of its own to fill in; the AlwaysAllow rule lives in ServerOptions.Complete.
func (o *AuthenticationOptions) Complete() error { return nil }

// Validate checks that the files exist and hold what they should.
func (o *AuthenticationOptions) Validate() []error {
	const s = SectionAuthentication
	var errs []error
	if p := checkReadableFile(s, "client-ca-file", o.ClientCAFile); p != nil {
		errs = append(errs, p)
	} else if o.ClientCAFile != "" {
		if err := checkCertificates(o.ClientCAFile); err != nil {
			errs = append(errs, problemf(s, "client-ca-file", o.ClientCAFile, "%v", err))
		}
	}
	if p := checkReadableFile(s, "token-auth-file", o.TokenAuthFile); p != nil {
		errs = append(errs, p)
	} else if o.TokenAuthFile != "" {
		if err := checkWith(o.TokenAuthFile, func(r io.Reader) error { _, err := auth.ParseTokens(r); return err }); err != nil {
			errs = append(errs, problemf(s, "token-auth-file", o.TokenAuthFile, "%v", err))
		}
	}
	errs = append(errs, o.ServiceAccounts.Validate()...)
	errs = append(errs, o.RequestHeader.Validate()...)
	if p := o.RequestHeader.overlapProblem(o.ClientCAFile); p != nil {
		errs = append(errs, p)
	}
	return errs
}

// checkCertificates requires at least one PEM certificate and no unparseable ones.
func checkCertificates(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return unwrapPathError(err)
	}
	n := 0
	for block, rest := pem.Decode(data); block != nil; block, rest = pem.Decode(rest) {
		if block.Type != "CERTIFICATE" {
			continue
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return fmt.Errorf("holds a certificate that cannot be parsed: %w", err)
		}
		n++
	}
	if n == 0 {
		return errors.New("holds no PEM certificate: give a file with one or more -----BEGIN CERTIFICATE----- blocks")
	}
	return nil
}

// checkWith opens path and hands it to parse, the same parser the server uses, so validation and
// serving never disagree about a file.
func checkWith(path string, parse func(io.Reader) error) error {
	f, err := os.Open(path)
	if err != nil {
		return unwrapPathError(err)
	}
	defer f.Close()
	return parse(f)
}
