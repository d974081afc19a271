package flags

import (
	"context"
	"fmt"
	"io"
	"net"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/apictl/apictl/pkg/certs"
	"github.com/apictl/apictl/pkg/features"
	"github.com/apictl/apictl/pkg/serve"
	"github.com/apictl/apictl/pkg/serve/auth"
	"github.com/apictl/apictl/pkg/serve/auth/rbac"
	"github.com/apictl/apictl/pkg/serve/dynamiccert"
)

// Config turns completed and validated options into the server's configuration, with logs going to
// logOut. As kube does, it binds the listeners first, so that a port in use fails the start at once,
// before anything slower runs; on error it closes them again. It writes files in one case only: with
// no --tls-cert-file, the self-signed PKI in --cert-dir is created or refreshed, as `apictl certs init`
// would.
func (o *ServerOptions) Config(ctx context.Context, logOut io.Writer) (cfg *serve.Config, err error) {
	cfg = &serve.Config{LogWriter: serve.NewCheckedWriter(logOut)}
	cfg.Logger = o.Logs.NewLogger(cfg.LogWriter)
	for _, w := range o.Warnings() {
		cfg.Logger.Warn(w.Error())
	}
	secureLn, insecureLn, err := o.listen()
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			closeAll(secureLn, insecureLn)
		}
	}()
	steps := []struct {
		name  string
		apply func(context.Context, *serve.Config) error
	}{
		{SectionGeneric, o.Generic.ApplyTo},
		{SectionFeatures, o.Features.ApplyTo},
		{SectionSecureServing, o.SecureServing.ApplyTo},
		{SectionInsecureServing, o.InsecureServing.ApplyTo},
		{SectionAuthentication, o.Authentication.ApplyTo},
		{SectionAuthorization, o.Authorization.ApplyTo},
		{SectionAuditing, o.Audit.ApplyTo},
	}
	for _, s := range steps {
		if err := s.apply(ctx, cfg); err != nil {
			return nil, fmt.Errorf("applying the %s settings: %w", s.name, err)
		}
	}
	if cfg.SecureServing != nil {
		cfg.SecureServing.Listener = secureLn
		cfg.ExternalAddress = net.JoinHostPort(o.externalHost(), strconv.Itoa(secureLn.Addr().(*net.TCPAddr).Port))
	}
	if cfg.InsecureServing != nil {
		cfg.InsecureServing.Listener = insecureLn
	}
	return cfg, nil
}

// externalHost is the host clients are told to use: the advertise address, else the external host
// name, else loopback.
func (o *ServerOptions) externalHost() string {
	switch {
	case o.Generic.AdvertiseAddress != "":
		return o.Generic.AdvertiseAddress
	case o.Generic.ExternalHostname != "":
		return o.Generic.ExternalHostname
	}
	return "127.0.0.1"
}

// listen binds the listeners that are turned on and not bound yet.
func (o *ServerOptions) listen() (secure, insecure net.Listener, err error) {
	secure, insecure = o.SecureServing.Listener, o.InsecureServing.Listener
	if secure == nil && o.SecureServing.BindPort != 0 {
		addr := net.JoinHostPort(o.SecureServing.BindAddress, strconv.Itoa(o.SecureServing.BindPort))
		if secure, err = serve.Listen(addr, "--secure-port"); err != nil {
			return nil, nil, err
		}
	}
	if insecure == nil && o.InsecureServing.BindPort != 0 {
		addr := net.JoinHostPort(o.InsecureServing.BindAddress, strconv.Itoa(o.InsecureServing.BindPort))
		if insecure, err = serve.Listen(addr, "--insecure-port"); err != nil {
			closeAll(secure)
			return nil, nil, err
		}
	}
	return secure, insecure, nil
}

func closeAll(listeners ...net.Listener) {
	for _, ln := range listeners {
		if ln != nil {
			ln.Close()
		}
	}
}

// ApplyTo copies the generic settings into cfg.
func (o *GenericOptions) ApplyTo(_ context.Context, cfg *serve.Config) error {
	for _, origin := range o.CORSAllowedOrigins {
		re, err := regexp.Compile(origin)
		if err != nil {
			return fmt.Errorf("compiling --cors-allowed-origins %q: %w", origin, err)
		}
		cfg.CORSAllowedOrigins = append(cfg.CORSAllowedOrigins, re)
	}
	gates, errs := features.Parse(o.FeatureGates)
	if len(errs) > 0 {
		return fmt.Errorf("parsing --feature-gates: %w", errs[0])
	}
	cfg.FeatureGates = gates
	cfg.MaxRequestsInFlight = o.MaxRequestsInFlight
	cfg.MaxMutatingRequestsInFlight = o.MaxMutatingRequestsInFlight
	cfg.RequestTimeout = o.RequestTimeout
	cfg.MinRequestTimeout = time.Duration(o.MinRequestTimeout) * time.Second
	cfg.MaxRequestBodyBytes = o.MaxRequestBodyBytes
	cfg.MemoryBudget = o.MemoryBudgetBytes
	cfg.ShutdownDelayDuration = o.ShutdownDelayDuration
	cfg.ShutdownTimeout = o.ShutdownTimeout
	cfg.LivezGracePeriod = o.LivezGracePeriod
	return nil
}

// ApplyTo copies the feature switches into cfg.
func (o *FeatureOptions) ApplyTo(_ context.Context, cfg *serve.Config) error {
	cfg.EnableProfiling = o.Profiling
	cfg.EnablePriorityAndFairness = o.EnablePriorityAndFairness
	return nil
}

// ApplyTo configures the TLS listener. Without certificate files it loads or creates the CA, serving
// pair and admin kubeconfig in the cert dir, and trusts that CA for client certificates, so that the
// admin kubeconfig works at once.
func (o *SecureServingOptions) ApplyTo(ctx context.Context, cfg *serve.Config) error {
	if o.BindPort == 0 {
		cfg.SecureServing = nil
		return nil
	}
	certFile, keyFile := o.CertFile, o.KeyFile
	var bootstrapCA string
	if certFile == "" {
		spec := certs.NewServingSpec(o.CertDir)
		spec.SecurePort = o.BindPort
		spec.AdvertiseAddress = o.advertiseAddress
		if o.externalHostname != "" && net.ParseIP(o.externalHostname) == nil {
			spec.Hosts = append(spec.Hosts, o.externalHostname)
		}
		report, err := certs.EnsureServing(ctx, spec)
		if err != nil {
			return fmt.Errorf("bootstrapping the self-signed PKI in %s: %w", o.CertDir, err)
		}
		logPKIReport(cfg.Logger, report)
		// After "the server is ready", as the start's last line: it is what a new user does next.
		cfg.ReadyHints = append(cfg.ReadyHints, serve.Hint{
			Message: "admin credentials: use kubectl --kubeconfig " + report.AdminKubeconfig + " get --raw /version",
			Args:    []any{"kubeconfig", report.AdminKubeconfig, "ca", report.CACert},
		})
		certFile, keyFile, bootstrapCA = report.ServingCert, report.ServingKey, report.CACert
	}
	cert, err := dynamiccert.NewServingCert(certFile, keyFile, cfg.Logger)
	if err != nil {
		return err
	}
	version, _ := TLSVersion(o.MinTLSVersion)
	var suites []uint16 // nil, not empty: an empty list would forbid every suite HTTP/2 needs
	for _, name := range o.CipherSuites {
		id, _ := CipherSuite(name)
		suites = append(suites, id)
	}
	cfg.SecureServing = &serve.SecureServingInfo{
		Address:                      net.JoinHostPort(o.BindAddress, strconv.Itoa(o.BindPort)),
		Cert:                         cert,
		MinTLSVersion:                version,
		CipherSuites:                 suites,
		HTTP2MaxStreamsPerConnection: o.HTTP2MaxStreamsPerConnection,
	}
	if bootstrapCA != "" {
		ca, err := dynamiccert.NewCABundle(bootstrapCA, cfg.Logger)
		if err != nil {
			return err
		}
		cfg.SecureServing.ClientCA = ca
	}
	return nil
}

// ApplyTo configures the plain-HTTP listener.
func (o *InsecureServingOptions) ApplyTo(_ context.Context, cfg *serve.Config) error {
	if o.BindPort == 0 {
		cfg.InsecureServing = nil
		return nil
	}
	cfg.InsecureServing = &serve.InsecureServingInfo{Address: net.JoinHostPort(o.BindAddress, strconv.Itoa(o.BindPort)), AnyHost: o.AllowRemote}
	return nil
}

// ApplyTo builds the secure port's authenticator, in kube's order: front proxies (request headers),
// client certificates (from --client-ca-file, else the bootstrapped CA), static tokens, and anonymous
// requests when allowed.
func (o *AuthenticationOptions) ApplyTo(ctx context.Context, cfg *serve.Config) error {
	var authenticators []auth.Authenticator
	proxy, err := o.RequestHeader.authenticator(ctx, cfg)
	if err != nil {
		return err
	}
	if proxy != nil {
		authenticators = append(authenticators, proxy)
	}
	if o.ClientCAFile != "" && cfg.SecureServing != nil {
		ca, err := dynamiccert.NewCABundle(o.ClientCAFile, cfg.Logger)
		if err != nil {
			return err
		}
		cfg.SecureServing.ClientCA = ca
	}
	if cfg.SecureServing != nil && cfg.SecureServing.ClientCA != nil {
		authenticators = append(authenticators, &auth.ClientCert{Roots: cfg.SecureServing.ClientCA.Pool})
	}
	if o.TokenAuthFile != "" {
		tokens, err := auth.LoadTokenFile(o.TokenAuthFile)
		if err != nil {
			return err
		}
		authenticators = append(authenticators, tokens)
	}
	if err := o.ServiceAccounts.ApplyTo(ctx, cfg); err != nil {
		return fmt.Errorf("configuring service-account tokens: %w", err)
	}
	authenticators = append(authenticators, cfg.ServiceAccountTokens.Authenticator)
	var anonymous auth.Authenticator
	if o.Anonymous {
		anonymous = auth.Anonymous
	}
	cfg.Authentication = auth.Union(anonymous, authenticators...)
	if cfg.SecureServing != nil {
		var methods []string
		if proxy != nil {
			methods = append(methods, "front-proxy request headers")
		}
		if cfg.SecureServing.ClientCA != nil {
			methods = append(methods, "client certificates")
		}
		if o.TokenAuthFile != "" {
			methods = append(methods, "bearer tokens")
		}
		methods = append(methods, "service-account tokens")
		if o.Anonymous {
			methods = append(methods, "anonymous")
		}
		if len(methods) == 0 {
			cfg.Logger.Warn("the secure port has no way to authenticate anyone: every request gets 401; set --client-ca-file, --token-auth-file or --anonymous-auth")
		}
		cfg.Logger.Info("secure port authentication", "methods", strings.Join(methods, ", "))
	}
	return nil
}

// ApplyTo builds the secure port's authorizer from the modes, in order.
func (o *AuthorizationOptions) ApplyTo(_ context.Context, cfg *serve.Config) error {
	var modes []auth.Authorizer
	for _, mode := range o.Modes {
		switch mode {
		case ModeAlwaysAllow:
			modes = append(modes, auth.AlwaysAllow)
		case ModeAlwaysDeny:
			modes = append(modes, auth.AlwaysDeny)
		case ModeABAC:
			abac, err := auth.LoadABAC(o.PolicyFile)
			if err != nil {
				return err
			}
			modes = append(modes, abac)
		case ModeRBAC:
			// The server feeds its policy from the watch caches (pkg/apiserver).
			modes = append(modes, rbac.New())
		default:
			return fmt.Errorf("authorization mode %s is not available in this build", mode)
		}
	}
	for i, m := range modes {
		modes[i] = &auth.Named{Name: strings.ToLower(o.Modes[i]), Authorizer: m}
	}
	cfg.Authorization = auth.Chain(modes...)
	return nil
}
