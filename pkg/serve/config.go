// Package serve is apictl's API server: a Config is completed, a Server is created from it (creating
// everything, running nothing), prepared (health checks, the shutdown check, the index) and run until
// its context ends, then shut down gracefully.
//
// Shutdown, after the first SIGTERM or SIGINT cancels Run's context:
//
//	T0                      readyz fails (shutdown check); pre-shutdown hooks start; requests still served
//	T0+ShutdownDelay        (and hooks done) STOPPING=1; listeners close; long-running requests end
//	                        cleanly; in-flight requests drain, bounded by ShutdownTimeout
//	drained                 post-shutdown hooks (storage closes last); Run returns nil
package serve

import (
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"time"

	"github.com/apictl/apictl/pkg/features"
	"github.com/apictl/apictl/pkg/routes"
	"github.com/apictl/apictl/pkg/serve/audit"
	"github.com/apictl/apictl/pkg/serve/auth"
	"github.com/apictl/apictl/pkg/serve/auth/serviceaccount"
	"github.com/apictl/apictl/pkg/serve/dynamiccert"
	"github.com/apictl/apictl/pkg/version"
)

// Config is everything a Server is built from. pkg/flags fills it from the command line.
type Config struct {
	// CORSAllowedOrigins are matched against the Origin header; empty turns CORS off.
	CORSAllowedOrigins []*regexp.Regexp
	// MaxRequestsInFlight and MaxMutatingRequestsInFlight bound concurrent reads and writes (0: no limit).
	MaxRequestsInFlight         int
	MaxMutatingRequestsInFlight int
	// RequestTimeout bounds requests that are not long-running.
	RequestTimeout time.Duration
	// MinRequestTimeout is the shortest a watch lasts; each picks a random timeout in [min, 2*min].
	MinRequestTimeout time.Duration
	// MaxRequestBodyBytes bounds request bodies (0: no limit).
	MaxRequestBodyBytes int64
	// MemoryBudget is the heap LISTs are admitted against (filters.MemoryBudget; 0: none), and
	// ListStoredBytes estimates a resource's stored bytes for it (nil: every LIST is charged as long).
	MemoryBudget    int64
	ListStoredBytes func(group, resource string) (int64, bool)
	// ShutdownDelayDuration keeps serving after the signal, with /readyz failing, so that load balancers
	// take the server out of rotation before its listeners close. Default 0.
	ShutdownDelayDuration time.Duration
	// ShutdownTimeout bounds the drain of in-flight requests once listeners close. Default 60s.
	ShutdownTimeout time.Duration
	// LivezGracePeriod is how long /livez ignores unfinished post-start hooks. Default 0.
	LivezGracePeriod time.Duration
	// EnableProfiling serves /debug/pprof/.
	EnableProfiling bool
	// EnablePriorityAndFairness asks for API Priority and Fairness in place of the max-in-flight
	// limits, whose sum is then the server's concurrency limit. The server's builder installs it
	// (Server.SetRequestLimit): it needs the flowcontrol API served.
	EnablePriorityAndFairness bool
	// FeatureGates are the resolved --feature-gates.
	FeatureGates features.Gates

	// API is the enabled API: its route table is the server's mux, discovery and OpenAPI. Nil serves
	// only the endpoints outside the API.
	API *routes.API
	// Resources serves the API's resource routes; nil answers them 503.
	Resources ResourceHandler
	// ExternalAddress is host:port as clients should reach the server, published in /api's
	// serverAddressByClientCIDRs.
	ExternalAddress string

	// SecureServing is the TLS listener; nil turns it off.
	SecureServing *SecureServingInfo
	// InsecureServing is the plain-HTTP listener without authentication or authorization; nil turns it off.
	InsecureServing *InsecureServingInfo

	// Authentication and Authorization guard the secure listener.
	Authentication auth.Authenticator
	Authorization  auth.Authorizer
	// ServiceAccountTokens issues and verifies service-account tokens; its authenticator is part of
	// Authentication. When set, the OIDC discovery documents are served.
	ServiceAccountTokens *serviceaccount.Tokens
	// Join, when set, answers the paths under JoinPrefix on the secure listener ahead of the filters:
	// the embedded etcd cluster's join endpoint, whose callers have a join token and no API
	// credentials yet, and which checks that token itself.
	Join       http.Handler
	JoinPrefix string
	// Audit writes the audit log; nil (no --audit-policy-file) keeps audit out of the chain entirely.
	Audit *audit.Auditor

	// Logger receives the server's logs. LogWriter, when set, is the writer under it, and backs the
	// `log` health check.
	Logger    *slog.Logger
	LogWriter *CheckedWriter
	// Version is served at /version.
	Version version.Info
	// Notify sends a state such as READY=1 to the service manager; nil uses systemd's socket when the
	// process runs under systemd.
	Notify func(state string) error
	// ReadyHints are logged at Info right after "the server is ready", as the last lines of the start:
	// what a user does next (the bootstrap admin's kubeconfig) is then the first thing they read, not
	// a line somewhere above the listeners and the bootstrap.
	ReadyHints []Hint
}

// Hint is one log line of ReadyHints: a message and slog's alternating keys and values.
type Hint struct {
	Message string
	Args    []any
}

// SecureServingInfo configures the TLS listener.
type SecureServingInfo struct {
	// Address is host:port to listen on, used when Listener is nil.
	Address string
	// Listener, when set, is already bound (tests bind port 0 first to learn the port).
	Listener net.Listener
	// Cert is the serving pair, reloaded from disk when it changes.
	Cert *dynamiccert.ServingCert
	// ClientCA, when set, makes the server request (not require) client certificates.
	ClientCA *dynamiccert.CABundle
	// RequestHeaderCA, when set, verifies front proxies' client certificates; it too makes the server
	// request client certificates, and is reloaded like ClientCA.
	RequestHeaderCA *dynamiccert.CABundle
	// MinTLSVersion and CipherSuites are crypto/tls values; zero values mean Go's defaults above TLS 1.2.
	MinTLSVersion uint16
	CipherSuites  []uint16
	// HTTP2MaxStreamsPerConnection bounds concurrent streams per HTTP/2 connection (0: Go's default).
	HTTP2MaxStreamsPerConnection int
	// ReloadInterval is how often Cert and the CA bundles are compared with the files on disk. Default 1s.
	ReloadInterval time.Duration
}

// InsecureServingInfo configures the plain-HTTP listener: no authentication, no authorization, every
// request is system:unsecured in system:masters. Keep it on loopback.
type InsecureServingInfo struct {
	Address  string
	Listener net.Listener
	// AnyHost answers requests whatever their Host; otherwise only loopback hosts get an answer, so
	// that a web page cannot reach the port through DNS rebinding.
	AnyHost bool
}

// CompletedConfig is a Config whose defaults are filled in; only Complete makes one, so New cannot
// be called on an incomplete config.
type CompletedConfig struct {
	*completedConfig
}

type completedConfig struct {
	Config
}

// Complete fills in defaults.
func (c Config) Complete() CompletedConfig {
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = time.Minute
	}
	if c.MinRequestTimeout <= 0 {
		c.MinRequestTimeout = 1800 * time.Second
	}
	if c.ShutdownTimeout <= 0 {
		c.ShutdownTimeout = 60 * time.Second
	}
	if c.Authentication == nil {
		c.Authentication = auth.Union(nil)
	}
	if c.Authorization == nil {
		c.Authorization = auth.Chain(auth.AlwaysAllow)
	}
	if c.SecureServing != nil && c.SecureServing.MinTLSVersion == 0 {
		c.SecureServing.MinTLSVersion = tls.VersionTLS12
	}
	if c.Version.GitVersion == "" {
		c.Version = version.Get()
	}
	if c.API == nil {
		c.API, _ = routes.NewAPI(nil)
	}
	return CompletedConfig{&completedConfig{c}}
}

// validate reports what Complete cannot fix.
func (c *completedConfig) validate() error {
	var errs []error
	if c.SecureServing == nil && c.InsecureServing == nil {
		errs = append(errs, errors.New("neither a secure nor an insecure listener is configured: set --secure-port or --insecure-port"))
	}
	if c.SecureServing != nil && c.SecureServing.Cert == nil {
		errs = append(errs, errors.New("the secure listener has no serving certificate"))
	}
	if c.SecureServing != nil && c.SecureServing.Listener == nil && c.SecureServing.Address == "" {
		errs = append(errs, errors.New("the secure listener has neither an address nor a listener"))
	}
	if c.InsecureServing != nil && c.InsecureServing.Listener == nil && c.InsecureServing.Address == "" {
		errs = append(errs, errors.New("the insecure listener has neither an address nor a listener"))
	}
	return errors.Join(errs...)
}
