package flags

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/apictl/apictl/pkg/certs"
	"github.com/apictl/apictl/pkg/kinds"
)

// SigningOptions are kube-controller-manager's --cluster-signing-* flags: the CA its CSR signers
// (certificatesigningrequest-signing-controller) sign approved requests with, and the longest
// certificate they issue.
type SigningOptions struct {
	CertFile, KeyFile string
	Duration          time.Duration
	// bootstrapCertDir is the cert dir apictl serve bootstraps: its CA, which the secure port trusts
	// for client certificates, signs when no files are given. Set by ServerOptions.Complete.
	bootstrapCertDir string
}

// NewSigningOptions has kube's default duration, a year.
func NewSigningOptions() *SigningOptions {
	return &SigningOptions{Duration: 365 * 24 * time.Hour}
}

// AddFlags registers the flags with kube-controller-manager's help.
func (o *SigningOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.CertFile, "cluster-signing-cert-file", o.CertFile,
		"Filename containing a PEM-encoded X509 CA certificate used to issue cluster-scoped certificates. If blank, "+
			"the bootstrapped CA of the cert dir, which the secure port trusts for client certificates.")
	fs.StringVar(&o.KeyFile, "cluster-signing-key-file", o.KeyFile,
		"Filename containing a PEM-encoded RSA or ECDSA private key used to sign cluster-scoped certificates.")
	fs.DurationVar(&o.Duration, "cluster-signing-duration", o.Duration,
		"The max length of duration signed certificates will be given. Individual CSRs may request shorter certs by setting spec.expirationSeconds.")
}

// Complete has nothing to fill in.
func (o *SigningOptions) Complete() error { return nil }

// Validate checks that both files are given or neither, that they can be read, and the duration.
func (o *SigningOptions) Validate() []error {
	s := SectionLeaderElection
	var errs []error
	switch {
	case o.CertFile != "" && o.KeyFile == "":
		errs = append(errs, problemf(s, "cluster-signing-key-file", "", "is needed with --cluster-signing-cert-file: give the CA's key"))
	case o.CertFile == "" && o.KeyFile != "":
		errs = append(errs, problemf(s, "cluster-signing-cert-file", "", "is needed with --cluster-signing-key-file: give the CA's certificate"))
	}
	for _, p := range []*Problem{checkReadableFile(s, "cluster-signing-cert-file", o.CertFile), checkReadableFile(s, "cluster-signing-key-file", o.KeyFile)} {
		if p != nil {
			errs = append(errs, p)
		}
	}
	if o.Duration < 10*time.Minute {
		errs = append(errs, problemf(s, "cluster-signing-duration", o.Duration.String(), "must be at least 10m, the shortest certificate a signer issues"))
	}
	return errs
}

// Effective returns what the signers sign with: the files given, else the bootstrapped CA, else
// nothing (no signer runs).
func (o *SigningOptions) Effective() kinds.Signing {
	sg := kinds.Signing{CertFile: o.CertFile, KeyFile: o.KeyFile, Duration: o.Duration}
	if sg.CertFile == "" && o.bootstrapCertDir != "" {
		sg.CertFile, sg.KeyFile = certs.CertPath(o.bootstrapCertDir, certs.NameCA), certs.KeyPath(o.bootstrapCertDir, certs.NameCA)
	}
	return sg
}
