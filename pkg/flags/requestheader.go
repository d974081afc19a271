package flags

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/client-go/util/cert"

	"github.com/apictl/apictl/pkg/certs"
	"github.com/apictl/apictl/pkg/features"
	"github.com/apictl/apictl/pkg/serve"
	"github.com/apictl/apictl/pkg/serve/auth"
	"github.com/apictl/apictl/pkg/serve/dynamiccert"
)

// The header names of kubeadm's kube-apiserver manifest, which the aggregation layer sends.
const (
	headerRemoteUser        = "X-Remote-User"
	headerRemoteGroup       = "X-Remote-Group"
	headerRemoteUID         = "X-Remote-Uid"
	headerRemoteExtraPrefix = "X-Remote-Extra-"
)

// RequestHeaderOptions configure front-proxy authentication: a request whose client certificate an
// authority of ClientCAFile signed, for one of AllowedNames, is the user its headers name. Kube's
// flags, defaults (all empty) and checks (k8s.io/apiserver's RequestHeaderAuthenticationOptions).
type RequestHeaderOptions struct {
	// ClientCAFile verifies the proxies' client certificates; empty turns the authenticator off.
	ClientCAFile string
	// AllowedNames are the common names a proxy's certificate may have; empty allows any.
	AllowedNames []string
	// UsernameHeaders are tried in order; the first non-empty one names the user.
	UsernameHeaders []string
	// UIDHeaders, GroupHeaders and ExtraHeaderPrefixes give the user's UID, groups and extras.
	UIDHeaders          []string
	GroupHeaders        []string
	ExtraHeaderPrefixes []string

	// uidHeadersOff is set by ServerOptions.Complete when --feature-gates turns RemoteRequestHeaderUID
	// off, which forbids --requestheader-uid-headers.
	uidHeadersOff bool
	// bootstrapCertDir is the cert dir apictl serve bootstraps (no --tls-cert-file), set by
	// ServerOptions.Complete: with no --requestheader-* flag, its front-proxy CA is trusted as kubeadm
	// configures it, so that the aggregation layer works out of the box.
	bootstrapCertDir string
}

// NewRequestHeaderOptions returns kube-apiserver's defaults: everything empty, the authenticator off.
func NewRequestHeaderOptions() *RequestHeaderOptions { return &RequestHeaderOptions{} }

// AddFlags registers the --requestheader-* flags with kube's help texts.
func (o *RequestHeaderOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringSliceVar(&o.UsernameHeaders, "requestheader-username-headers", o.UsernameHeaders,
		"List of request headers to inspect for usernames. X-Remote-User is common.")
	fs.StringSliceVar(&o.UIDHeaders, "requestheader-uid-headers", o.UIDHeaders,
		"List of request headers to inspect for UIDs. X-Remote-Uid is suggested. Requires the RemoteRequestHeaderUID feature to be enabled.")
	fs.StringSliceVar(&o.GroupHeaders, "requestheader-group-headers", o.GroupHeaders,
		"List of request headers to inspect for groups. X-Remote-Group is suggested.")
	fs.StringSliceVar(&o.ExtraHeaderPrefixes, "requestheader-extra-headers-prefix", o.ExtraHeaderPrefixes,
		"List of request header prefixes to inspect. X-Remote-Extra- is suggested.")
	fs.StringVar(&o.ClientCAFile, "requestheader-client-ca-file", o.ClientCAFile,
		"Root certificate bundle to use to verify client certificates on incoming requests before trusting usernames in headers specified by "+
			"--requestheader-username-headers. WARNING: generally do not depend on authorization being already done for incoming requests.")
	fs.StringSliceVar(&o.AllowedNames, "requestheader-allowed-names", o.AllowedNames,
		"List of client certificate common names to allow to provide usernames in headers specified by --requestheader-username-headers. "+
			"If empty, any client certificate validated by the authorities in --requestheader-client-ca-file is allowed.")
}

// Validate checks the CA file and the header lists with kube's rules.
func (o *RequestHeaderOptions) Validate() []error {
	const s = SectionAuthentication
	var errs problemList
	for _, l := range []struct {
		flag   string
		values []string
	}{
		{"requestheader-username-headers", o.UsernameHeaders},
		{"requestheader-group-headers", o.GroupHeaders},
		{"requestheader-extra-headers-prefix", o.ExtraHeaderPrefixes},
		{"requestheader-allowed-names", o.AllowedNames},
		{"requestheader-uid-headers", o.UIDHeaders},
	} {
		if slices.ContainsFunc(l.values, func(v string) bool { return strings.TrimSpace(v) == "" }) {
			errs.add(problemf(s, l.flag, strings.Join(l.values, ","), "has an empty value: remove the stray comma or blank entry"))
		}
	}
	switch {
	case len(o.UIDHeaders) > 0 && o.uidHeadersOff:
		errs.add(problemf(s, "requestheader-uid-headers", "", "requires the %q feature to be enabled", features.RemoteRequestHeaderUID))
	case len(o.UIDHeaders) > 0 && !hasFold(o.UIDHeaders, headerRemoteUID):
		// Kube made this one an error, not a warning, since the flag was new when it did.
		errs.add(problemf(s, "requestheader-uid-headers", "", "is set without specifying the standard %s header - API aggregation will not work", headerRemoteUID))
	}
	if p := checkReadableFile(s, "requestheader-client-ca-file", o.ClientCAFile); p != nil {
		errs.add(p)
	} else if o.ClientCAFile != "" {
		if err := checkCertificates(o.ClientCAFile); err != nil {
			errs.add(problemf(s, "requestheader-client-ca-file", o.ClientCAFile, "%v", err))
		}
	}
	return errs
}

// overlapProblem is kube's check across the two CA files (BuiltInAuthenticationOptions.Validate):
// when --client-ca-file and --requestheader-client-ca-file share a certificate, allowed names are
// required, or every ordinary client could claim to be any user.
func (o *RequestHeaderOptions) overlapProblem(clientCAFile string) *Problem {
	if clientCAFile == "" || o.ClientCAFile == "" || len(o.AllowedNames) > 0 || !bundlesOverlap(clientCAFile, o.ClientCAFile) {
		return nil
	}
	return problemf(SectionAuthentication, "requestheader-client-ca-file", "",
		"and --client-ca-file contain overlapping certificates; --requestheader-allowed-names must be specified to ensure regular client certificates cannot set authenticating proxy headers for arbitrary users")
}

// Warnings are kube's: header lists without the standard names the aggregation layer sends; and
// apictl's own: settings that do nothing without a CA file, which also turn the bootstrap defaults off.
func (o *RequestHeaderOptions) Warnings() []*Problem {
	const s = SectionAuthentication
	var out []*Problem
	if !o.unset() && o.ClientCAFile == "" {
		fix := "give --requestheader-client-ca-file"
		if o.bootstrapCertDir != "" {
			fix += " " + certs.CertPath(o.bootstrapCertDir, certs.NameFrontProxyCA) + " to trust the bootstrapped front-proxy CA"
		}
		out = append(out, problemf(s, "requestheader-client-ca-file", "",
			"is not set, so front-proxy authentication is off and the other --requestheader-* flags do nothing: %s", fix))
	}
	for _, l := range []struct {
		flag, standard string
		values         []string
	}{
		{"requestheader-username-headers", headerRemoteUser, o.UsernameHeaders},
		{"requestheader-group-headers", headerRemoteGroup, o.GroupHeaders},
		{"requestheader-extra-headers-prefix", headerRemoteExtraPrefix, o.ExtraHeaderPrefixes},
	} {
		if len(l.values) > 0 && !hasFold(l.values, l.standard) {
			what := "header"
			if l.standard == headerRemoteExtraPrefix {
				what = "header prefix"
			}
			out = append(out, problemf(s, l.flag, "", "is set without specifying the standard %s %s - API aggregation will not work", l.standard, what))
		}
	}
	return out
}

// bundlesOverlap reports whether two PEM bundles share a certificate; unreadable bundles are
// reported by their own checks.
func bundlesOverlap(a, b string) bool {
	certsA, errA := cert.CertsFromFile(a)
	certsB, errB := cert.CertsFromFile(b)
	if errA != nil || errB != nil {
		return false
	}
	for _, ca := range certsA {
		if slices.ContainsFunc(certsB, ca.Equal) {
			return true
		}
	}
	return false
}

func hasFold(list []string, s string) bool {
	return slices.ContainsFunc(list, func(v string) bool { return strings.EqualFold(v, s) })
}

// unset reports whether the user gave no --requestheader-* setting at all.
func (o *RequestHeaderOptions) unset() bool {
	return o.ClientCAFile == "" && len(o.AllowedNames) == 0 && len(o.UsernameHeaders) == 0 && len(o.UIDHeaders) == 0 &&
		len(o.GroupHeaders) == 0 && len(o.ExtraHeaderPrefixes) == 0
}

// Effective returns the settings to serve with: the user's, or, when apictl bootstrapped its PKI and
// the user gave none, kubeadm's: the bootstrap front-proxy CA, allowed name front-proxy-client and
// the X-Remote-* headers. The extension-apiserver-authentication ConfigMap publishes them.
func (o *RequestHeaderOptions) Effective() RequestHeaderOptions {
	if !o.unset() || o.bootstrapCertDir == "" {
		return *o
	}
	return RequestHeaderOptions{
		ClientCAFile:        certs.CertPath(o.bootstrapCertDir, certs.NameFrontProxyCA),
		AllowedNames:        []string{certs.FrontProxyClientName},
		UsernameHeaders:     []string{headerRemoteUser},
		GroupHeaders:        []string{headerRemoteGroup},
		ExtraHeaderPrefixes: []string{headerRemoteExtraPrefix},
	}
}

// authenticator builds the request-header authenticator, or returns nil when no CA is configured. It
// puts the CA bundle on the secure port, which then asks for client certificates and reloads the file.
// AuthenticationOptions.ApplyTo calls it, to place the authenticator first in the union, as kube does.
func (o *RequestHeaderOptions) authenticator(ctx context.Context, cfg *serve.Config) (auth.Authenticator, error) {
	e := o.Effective()
	if e.ClientCAFile == "" || cfg.SecureServing == nil {
		return nil, nil
	}
	ca, err := dynamiccert.NewCABundle(e.ClientCAFile, cfg.Logger)
	if err != nil {
		return nil, fmt.Errorf("loading --requestheader-client-ca-file: %w", err)
	}
	cfg.SecureServing.RequestHeaderCA = ca
	a, err := auth.NewRequestHeader(auth.RequestHeaderConfig{
		Roots:               ca.Pool,
		AllowedNames:        e.AllowedNames,
		UsernameHeaders:     e.UsernameHeaders,
		UIDHeaders:          e.UIDHeaders,
		GroupHeaders:        e.GroupHeaders,
		ExtraHeaderPrefixes: e.ExtraHeaderPrefixes,
	})
	if err != nil {
		return nil, err
	}
	args := []any{"ca", e.ClientCAFile, "allowedNames", strings.Join(e.AllowedNames, ","), "usernameHeaders", strings.Join(e.UsernameHeaders, ",")}
	level := slog.LevelInfo
	if o.unset() {
		args = append(args, "source", "bootstrap PKI (no --requestheader-* flag given)")
		// The defaults every start has: "secure port authentication" already names front-proxy
		// request headers among the methods. Settings from flags are confirmed at Info.
		level = slog.LevelDebug
	}
	cfg.Logger.Log(ctx, level, "front-proxy (request-header) authentication", args...)
	return a, nil
}
