package flags

import (
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/apictl/apictl/pkg/serve/auth"
)

// Authorization modes, as kube names them.
const (
	ModeAlwaysAllow = "AlwaysAllow"
	ModeAlwaysDeny  = "AlwaysDeny"
	ModeABAC        = "ABAC"
	ModeRBAC        = "RBAC"
)

// AuthorizationModes lists the modes --authorization-mode accepts.
func AuthorizationModes() []string {
	return []string{ModeAlwaysAllow, ModeAlwaysDeny, ModeABAC, ModeRBAC}
}

// AuthorizationOptions say how the secure port decides what a caller may do.
type AuthorizationOptions struct {
	// Modes are evaluated in order; the first that decides wins.
	Modes []string
	// PolicyFile is the ABAC policy: one JSON object per line.
	PolicyFile string
}

// NewAuthorizationOptions returns RBAC, as kubeadm and k3s set it: a certificate the CA signs gets
// only what a binding grants, and the bootstrap admin (system:masters) still gets everything.
// AlwaysAllow, kube's default before 1.30, is there for whoever asks for it.
func NewAuthorizationOptions() *AuthorizationOptions {
	return &AuthorizationOptions{Modes: []string{ModeRBAC}}
}

// AddFlags registers the authorization flags with the current values as defaults.
func (o *AuthorizationOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringSliceVar(&o.Modes, "authorization-mode", o.Modes,
		"Ordered list of plug-ins to do authorization on secure port. Comma-delimited list of: "+strings.Join(AuthorizationModes(), ",")+".")
	fs.StringVar(&o.PolicyFile, "authorization-policy-file", o.PolicyFile,
		"File with authorization policy in json line by line format, used with --authorization-mode=ABAC, on the secure port.")
}

// Complete has nothing to fill in.
func (o *AuthorizationOptions) Complete() error { return nil }

// Has reports whether mode is among the configured modes.
func (o *AuthorizationOptions) Has(mode string) bool {
	for _, m := range o.Modes {
		if m == mode {
			return true
		}
	}
	return false
}

// Validate reports every problem with the authorization settings, with kube's rules.
func (o *AuthorizationOptions) Validate() []error {
	const s = SectionAuthorization
	var errs []error
	modes := strings.Join(o.Modes, ",")
	if len(o.Modes) == 0 {
		errs = append(errs, problemf(s, "authorization-mode", "", "needs at least one mode: use one or more of %s", strings.Join(AuthorizationModes(), ", ")))
	}
	seen := map[string]bool{}
	for _, mode := range o.Modes {
		known := false
		for _, m := range AuthorizationModes() {
			known = known || m == mode
		}
		switch {
		case !known:
			errs = append(errs, problemf(s, "authorization-mode", mode, "is not a valid mode: use one or more of %s", strings.Join(AuthorizationModes(), ", ")))
		case seen[mode]:
			errs = append(errs, problemf(s, "authorization-mode", modes, "has mode %s specified more than once: list each mode once", mode))
		}
		seen[mode] = true
	}
	if o.Has(ModeABAC) && o.PolicyFile == "" {
		errs = append(errs, problemf(s, "authorization-policy-file", "", "must be given with --authorization-mode ABAC: ABAC's authorization policy file not passed"))
	}
	if !o.Has(ModeABAC) && o.PolicyFile != "" {
		errs = append(errs, problemf(s, "authorization-policy-file", o.PolicyFile, "cannot be given without --authorization-mode ABAC: add ABAC to the modes or drop the file"))
	}
	if p := checkReadableFile(s, "authorization-policy-file", o.PolicyFile); p != nil {
		errs = append(errs, p)
	} else if o.PolicyFile != "" {
		if err := checkWith(o.PolicyFile, func(r io.Reader) error { _, err := auth.ParseABAC(r); return err }); err != nil {
			errs = append(errs, problemf(s, "authorization-policy-file", o.PolicyFile, "%v", err))
		}
	}
	return errs
}
