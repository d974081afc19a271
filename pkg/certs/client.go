package certs

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// ClientSpec says which client certificate IssueClient makes. Start from NewClientSpec.
type ClientSpec struct {
	// Dir is the cert dir; its CA (ca.crt and ca.key) signs the certificate, <Name>.crt and
	// <Name>.key.
	Dir string
	// Name is the user name (the certificate's common name) and the files' stem.
	Name string
	// Groups are the user's groups (the certificate's organizations).
	Groups []string
	// Server is the kubeconfig's server URL; empty means ServerURL(AdvertiseAddress, SecurePort).
	Server           string
	AdvertiseAddress string
	SecurePort       int
	// KubeconfigOut is where the kubeconfig goes; empty means <Dir>/<Name>.kubeconfig.
	KubeconfigOut string
	Validity      time.Duration
	KeyAlgorithm  KeyAlgorithm
	// Force re-issues the certificate with a new key even when the existing one fits.
	Force bool
}

// NewClientSpec returns the defaults for a user's certificate.
func NewClientSpec(dir, name string) ClientSpec {
	return ClientSpec{Dir: dir, Name: name, SecurePort: DefaultSecurePort, Validity: DefaultValidity}
}

// Common names and organizations are at most 64 characters (RFC 5280, ub-common-name).
const maxNameLength = 64

var clientName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@:-]*$`)

// IssueClient makes (or keeps, when it still fits) a client certificate signed by the cert dir's CA,
// and writes a kubeconfig for it with the CA and the pair embedded.
func IssueClient(ctx context.Context, spec ClientSpec) (*Report, error) {
	return issueClient(ctx, spec, atomicWriter{})
}

func issueClient(ctx context.Context, spec ClientSpec, w fileWriter) (*Report, error) {
	groups, server, alg, err := spec.check()
	if err != nil {
		return nil, err
	}
	r := newRun(spec.Dir, time.Now())
	ca, _, missing, err := r.loadCA(NameCA)
	switch {
	case missing:
		return nil, fmt.Errorf("%s has no CA (%s): create it with apictl certs init --cert-dir %s", spec.Dir, CertPath(spec.Dir, NameCA), spec.Dir)
	case err != nil:
		return nil, err
	case ca.external:
		return nil, fmt.Errorf("%s has no key in %s (external CA): have that CA sign the certificate of %s", CertPath(spec.Dir, NameCA), spec.Dir, spec.Name)
	}
	prof := profile{name: spec.Name, commonName: spec.Name, organizations: groups, usage: usageClient, ca: NameCA}
	kp, err := r.ensureLeaf(ctx, prof, ca, nil, leafOptions{
		validity: spec.Validity, alg: alg, force: spec.Force,
		repair: fmt.Sprintf("run apictl certs client %s --force to re-issue it, or remove it", spec.Name),
	})
	if err != nil {
		return nil, err
	}
	out := spec.KubeconfigOut
	if out == "" {
		out = filepath.Join(spec.Dir, spec.Name+kubeconfigExt)
	}
	if err := r.ensureKubeconfig(out, server, spec.Name, ca.kp.Cert, kp); err != nil {
		return nil, err
	}
	if err := r.files.commit(ctx, w); err != nil {
		return nil, err
	}
	report := &Report{Dir: spec.Dir, CACert: CertPath(spec.Dir, NameCA), Files: r.results}
	if slices.Contains(groups, AdminGroup) {
		report.Notes = append(report.Notes, fmt.Sprintf("%s is in %s: Kubernetes authorizers let that group do anything, and a certificate cannot be revoked before it expires.",
			spec.Name, AdminGroup))
	}
	return report, nil
}

// check validates the spec, reporting every problem at once, and returns the groups without
// duplicates, the server URL and the key algorithm.
func (s ClientSpec) check() ([]string, string, KeyAlgorithm, error) {
	var errs []error
	errs = append(errs, checkDir(s.Dir))
	switch {
	case s.Name == "":
		errs = append(errs, errors.New("give the user's name, such as jane or system:kube-scheduler"))
	case len(s.Name) > maxNameLength || !clientName.MatchString(s.Name):
		errs = append(errs, fmt.Errorf("name %q must be 1 to %d letters, digits and . _ @ : - and start with a letter or digit: it is also a file name",
			s.Name, maxNameLength))
	case reservedName(s.Name):
		errs = append(errs, fmt.Errorf("name %q is used by apictl certs init: choose another name (renew %s with apictl certs renew %s)", s.Name, s.Name, s.Name))
	}
	var groups []string
	for _, g := range s.Groups {
		g = strings.TrimSpace(g)
		switch {
		case g == "":
			errs = append(errs, flagErrorf("groups", "", "has an empty entry: remove the stray comma"))
		case len(g) > maxNameLength:
			errs = append(errs, flagErrorf("groups", g, "is longer than %d characters", maxNameLength))
		case !slices.Contains(groups, g):
			groups = append(groups, g)
		}
	}
	if s.Validity <= 0 {
		errs = append(errs, flagErrorf("validity", FormatDuration(s.Validity), "must be greater than zero, like 1y or 8760h"))
	}
	alg, err := keyAlgorithmOrDefault(s.KeyAlgorithm)
	errs = append(errs, err)
	server := s.Server
	if server == "" {
		_, err := advertiseHost(s.AdvertiseAddress)
		errs = append(errs, err, checkSecurePort(s.SecurePort, "kubeconfig"))
		server = ServerURL(s.AdvertiseAddress, s.SecurePort)
	} else {
		errs = append(errs, checkServerURL("server", server))
	}
	return groups, server, alg, errors.Join(errs...)
}
