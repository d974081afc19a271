// Package flags holds the option sections of `apictl serve`: their flags, defaults, completion and
// validation, the merging of flags with the environment and a config file, and the reports that
// `apictl flags` prints about them.
package flags

import (
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/apictl/apictl/pkg/features"
)

// Section is what every option section implements.
type Section interface {
	AddFlags(fs *pflag.FlagSet)
	Complete() error
	Validate() []error
}

// ServerOptions are all the settings of `apictl serve`, one field per help section.
type ServerOptions struct {
	Generic         *GenericOptions
	Etcd            *EtcdOptions
	Encryption      *EncryptionOptions
	SecureServing   *SecureServingOptions
	InsecureServing *InsecureServingOptions
	Audit           *AuditOptions
	Features        *FeatureOptions
	Authentication  *AuthenticationOptions
	Authorization   *AuthorizationOptions
	APIEnablement   *APIEnablementOptions
	Logs            *LogsOptions
	Services        *ServicesOptions
	LeaderElection  *LeaderElectionOptions
	Controllers     *ControllerOptions
	Signing         *SigningOptions

	// ConfigFile is a YAML file whose keys are flag names; flags and the environment override it.
	ConfigFile string

	// warnings collects what Complete changed on the user's behalf.
	warnings []*Problem
	// sources, when known, say which values the user chose, so that Complete warns only about those.
	sources Sources
}

// NewServerOptions returns every section with its defaults.
func NewServerOptions() *ServerOptions {
	return &ServerOptions{
		Generic:         NewGenericOptions(),
		Etcd:            NewEtcdOptions(),
		Encryption:      NewEncryptionOptions(),
		SecureServing:   NewSecureServingOptions(),
		InsecureServing: NewInsecureServingOptions(),
		Audit:           NewAuditOptions(),
		Features:        NewFeatureOptions(),
		Authentication:  NewAuthenticationOptions(),
		Authorization:   NewAuthorizationOptions(),
		APIEnablement:   NewAPIEnablementOptions(),
		Logs:            NewLogsOptions(),
		Services:        NewServicesOptions(),
		LeaderElection:  NewLeaderElectionOptions(),
		Controllers:     NewControllerOptions(),
		Signing:         NewSigningOptions(),
	}
}

// sections pairs each section with its name, in help order.
func (o *ServerOptions) sections() []struct {
	name    string
	section Section
} {
	return []struct {
		name    string
		section Section
	}{
		{SectionGeneric, o.Generic},
		{SectionEtcd, o.Etcd},
		{SectionEtcd, o.Encryption},
		{SectionSecureServing, o.SecureServing},
		{SectionInsecureServing, o.InsecureServing},
		{SectionAuditing, o.Audit},
		{SectionFeatures, o.Features},
		{SectionAuthentication, o.Authentication},
		{SectionAuthorization, o.Authorization},
		{SectionAPIEnablement, o.APIEnablement},
		{SectionLogs, o.Logs},
		{SectionMisc, o.Services},
		{SectionLeaderElection, o.LeaderElection},
		{SectionLeaderElection, o.Controllers},
		{SectionLeaderElection, o.Signing},
	}
}

// Flags returns the flag sections of `apictl serve`, in help order, ending with the global section
// that holds --config.
func (o *ServerOptions) Flags() NamedFlagSets {
	var fss NamedFlagSets
	for _, s := range o.sections() {
		s.section.AddFlags(fss.FlagSet(s.name))
	}
	fss.FlagSet(SectionGlobal).StringVar(&o.ConfigFile, ConfigFlag, o.ConfigFile,
		"YAML file of settings whose keys are flag names (secure-port: 8443). Flags and "+EnvPrefix+"_* environment variables override it.")
	return fss
}

// Complete fills in what follows from other settings, then lets each section complete itself.
func (o *ServerOptions) Complete() error {
	for _, s := range o.sections() {
		if err := s.section.Complete(); err != nil {
			return err
		}
	}
	if o.SecureServing.CertDir == "" && o.Generic.DataDir != "" {
		o.SecureServing.CertDir = filepath.Join(o.Generic.DataDir, "pki")
	}
	if o.Generic.AdvertiseAddress == "" {
		if ip := net.ParseIP(o.SecureServing.BindAddress); ip != nil && !ip.IsUnspecified() {
			o.Generic.AdvertiseAddress = ip.String()
		}
	}
	o.SecureServing.advertiseAddress = o.Generic.AdvertiseAddress
	o.SecureServing.externalHostname = o.Generic.ExternalHostname
	o.Authentication.ServiceAccounts.certDir = o.SecureServing.CertDir
	o.Authentication.ServiceAccounts.tlsKeyFile = ""
	if o.SecureServing.CertFile != "" && o.SecureServing.BindPort != 0 {
		o.Authentication.ServiceAccounts.tlsKeyFile = o.SecureServing.KeyFile
	}
	o.Authentication.RequestHeader.bootstrapCertDir = ""
	o.Signing.bootstrapCertDir = ""
	if o.SecureServing.CertFile == "" && o.SecureServing.BindPort != 0 {
		o.Authentication.RequestHeader.bootstrapCertDir = o.SecureServing.CertDir
		o.Signing.bootstrapCertDir = o.SecureServing.CertDir
	}
	if gates, errs := features.Parse(o.Generic.FeatureGates); len(errs) == 0 {
		o.Authentication.RequestHeader.uidHeadersOff = !gates.Enabled(features.RemoteRequestHeaderUID)
	}
	o.warnings = nil
	if o.Authorization.Has(ModeAlwaysAllow) && o.Authentication.Anonymous {
		// As kube does: with AlwaysAllow, anonymous access would be full access. Only a user who asked
		// for anonymous access needs telling; the default quietly yields.
		o.Authentication.Anonymous = false
		if src := o.sources["anonymous-auth"]; src != "" && src != SourceDefault {
			o.warnings = append(o.warnings, problemf(SectionAuthentication, "anonymous-auth", "true",
				"is not allowed with the AlwaysAllow authorizer: resetting it to false; use another --authorization-mode to admit anonymous requests"))
		}
	}
	return nil
}

// Validate runs every section's checks and the checks that span sections, and returns all problems.
func (o *ServerOptions) Validate() []error {
	var errs []error
	for _, s := range o.sections() {
		errs = append(errs, s.section.Validate()...)
	}
	errs = append(errs, o.validatePriorityAndFairness()...)
	sec, insec := o.SecureServing, o.InsecureServing
	if sec.BindPort != 0 && sec.BindPort == insec.BindPort && addressesOverlap(sec.BindAddress, insec.BindAddress) {
		errs = append(errs, problemf(SectionInsecureServing, "insecure-port", strconv.Itoa(insec.BindPort),
			"is also the --secure-port on an overlapping address (%s and %s): give the two listeners different ports", sec.BindAddress, insec.BindAddress))
	}
	return errs
}

// validatePriorityAndFairness is kube's check that API Priority and Fairness has its API (the first
// of the runtime-config keys that settle flowcontrol.apiserver.k8s.io/v1 decides) and a positive
// concurrency limit to share out.
func (o *ServerOptions) validatePriorityAndFairness() []error {
	if !o.Features.EnablePriorityAndFairness {
		return nil
	}
	var errs []error
	for _, key := range []string{"flowcontrol.apiserver.k8s.io/v1", "api/ga", "api/all"} {
		v, ok := o.APIEnablement.RuntimeConfig[key]
		if !ok {
			continue
		}
		if v == "false" {
			// kube's words, which name both flags; then the fix.
			errs = append(errs, &Problem{Section: SectionAPIEnablement, Message: fmt.Sprintf(
				"--runtime-config=%s=false conflicts with --enable-priority-and-fairness=true: serve flowcontrol.apiserver.k8s.io/v1 or pass --enable-priority-and-fairness=false", key)})
		}
		if v == "true" || v == "false" {
			break
		}
	}
	g := o.Generic
	// A negative limit is reported by its own check.
	if g.MaxRequestsInFlight >= 0 && g.MaxMutatingRequestsInFlight >= 0 && g.MaxRequestsInFlight+g.MaxMutatingRequestsInFlight == 0 {
		errs = append(errs, &Problem{Section: SectionGeneric, Message: fmt.Sprintf(
			"invalid configuration: MaxRequestsInFlight=%d and MaxMutatingRequestsInFlight=%d; they must add up to something positive: API Priority and Fairness shares their sum out; raise --max-requests-inflight or pass --enable-priority-and-fairness=false",
			g.MaxRequestsInFlight, g.MaxMutatingRequestsInFlight)})
	}
	return errs
}

// Warnings returns what is allowed but probably not meant, including what Complete changed.
func (o *ServerOptions) Warnings() []*Problem {
	ws := append(append(append(append([]*Problem(nil), o.warnings...), o.InsecureServing.Warnings()...),
		o.Authentication.RequestHeader.Warnings()...), o.Authentication.ServiceAccounts.Warnings()...)
	if w := o.alwaysAllowWarning(); w != nil {
		ws = append(ws, w)
	}
	return ws
}

// alwaysAllowWarning flags AlwaysAllow on a secure port other machines may reach: every certificate
// the CA signs and every token then has the whole cluster. It stays a warning, as kube lets a user
// ask for it; on loopback only local clients can connect, which a test or a laptop may well mean.
func (o *ServerOptions) alwaysAllowWarning() *Problem {
	sec := o.SecureServing
	ip := net.ParseIP(sec.BindAddress)
	if !o.Authorization.Has(ModeAlwaysAllow) || sec.BindPort == 0 || (ip != nil && ip.IsLoopback()) {
		return nil
	}
	return problemf(SectionAuthorization, "authorization-mode", strings.Join(o.Authorization.Modes, ","),
		"allows every authenticated client to do anything, and --bind-address %s is not a loopback address: use --authorization-mode RBAC (the default) and grant with RoleBindings, or bind the secure port to 127.0.0.1",
		sec.BindAddress)
}

// addressesOverlap reports whether two bind addresses can collide on one port: equal, or either one
// unspecified (all interfaces).
func addressesOverlap(a, b string) bool {
	ipA, ipB := net.ParseIP(a), net.ParseIP(b)
	if ipA == nil || ipB == nil {
		return a == b
	}
	return ipA.IsUnspecified() || ipB.IsUnspecified() || ipA.Equal(ipB)
}
