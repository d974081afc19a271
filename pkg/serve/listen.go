package serve

//lint:file-ignore SA1019 x/net/http2's server is deprecated for net/http's HTTP2 settings; moving is a change of the serving path to make with the harness, not a lint fix

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	stdlog "log"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"golang.org/x/net/http2"

	"github.com/apictl/apictl/pkg/serve/auth"
	"github.com/apictl/apictl/pkg/serve/dynamiccert"
	"github.com/apictl/apictl/pkg/serve/filters"
	"github.com/apictl/apictl/pkg/serve/request"
)

// HTTP/2 buffers as kube sizes them: 256 KiB covers the 99th percentile of request bodies.
const http2Buffer = 256 << 10

type boundListeners struct {
	secure, insecure net.Listener
}

// Listen binds address for a serving port that 0 turns off, with an error that names the flag,
// what is wrong and how to fix it.
func Listen(address, flag string) (net.Listener, error) {
	ln, err := net.Listen("tcp", address)
	if err != nil {
		return nil, ListenError(address, flag, "or 0 to turn it off", err)
	}
	return ln, nil
}

// CheckPort binds address and lets it go again, so that a port the start needs later (etcd's, which
// etcd binds itself) is known to be free before anything is changed. alt is what else the flag
// takes, as ListenError says it.
func CheckPort(address, flag, alt string) error {
	ln, err := net.Listen("tcp", address)
	if err != nil {
		return ListenError(address, flag, alt, err)
	}
	return ln.Close()
}

// ListenError is err, from binding address, as one line naming flag, what is wrong and the fix;
// alt, when not empty, is what else the flag takes ("or 0 to turn it off"). It wraps err.
func ListenError(address, flag, alt string, err error) error {
	host, port, serr := net.SplitHostPort(address)
	if serr != nil {
		host, port = address, ""
	}
	if host == "" {
		host = "every address"
	}
	other := "choose another with " + flag
	if alt != "" {
		other += ", " + alt
	}
	var msg string
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		msg = fmt.Sprintf("%s %s on %s is in use by another process: %s", flag, port, host, other)
	case errors.Is(err, syscall.EACCES):
		msg = fmt.Sprintf("%s %s on %s: binding a port below 1024 needs root or CAP_NET_BIND_SERVICE: %s", flag, port, host, other)
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		msg = fmt.Sprintf("%s %s: %s is not an address of this host: give one of its addresses", flag, port, host)
	default:
		msg = fmt.Sprintf("%s %s on %s cannot be bound (%v): %s", flag, port, host, err, other)
	}
	return &listenError{msg: msg, err: err}
}

// listenError says in one line why a port could not be bound, and wraps the system's error.
type listenError struct {
	msg string
	err error
}

func (e *listenError) Error() string { return e.msg }
func (e *listenError) Unwrap() error { return e.err }

// listen binds the listeners that are not bound yet, failing fast with the address in the message.
func (p *PreparedServer) listen() (boundListeners, error) {
	var b boundListeners
	bind := func(existing net.Listener, address, flag string) (net.Listener, error) {
		if existing != nil {
			return existing, nil
		}
		return Listen(address, flag)
	}
	var err error
	if s := p.cfg.SecureServing; s != nil {
		if b.secure, err = bind(s.Listener, s.Address, "--secure-port"); err != nil {
			return b, err
		}
	}
	if s := p.cfg.InsecureServing; s != nil {
		if b.insecure, err = bind(s.Listener, s.Address, "--insecure-port"); err != nil {
			if b.secure != nil {
				b.secure.Close()
			}
			return b, err
		}
	}
	return b, nil
}

// httpServer is one listener with its server.
type httpServer struct {
	*http.Server
	kind, addr, url, authn string
	serve                  func() error
}

// newHTTPServers builds the secure and insecure servers, each with its own handler chain around the
// one mux.
func (p *PreparedServer) newHTTPServers(b boundListeners, drain <-chan struct{}) []*httpServer {
	var out []*httpServer
	if b.secure != nil {
		sec := p.cfg.SecureServing
		handler := p.chain(p.cfg.Authentication, p.cfg.Authorization)
		if p.cfg.Join != nil {
			handler = withJoin(handler, p.cfg.JoinPrefix, p.cfg.Join)
		}
		srv := p.newHTTPServer(handler, drain)
		srv.TLSConfig = &tls.Config{
			MinVersion:     sec.MinTLSVersion,
			CipherSuites:   sec.CipherSuites,
			GetCertificate: sec.Cert.GetCertificate,
			NextProtos:     []string{"h2", "http/1.1"},
		}
		if sec.ClientCA != nil || sec.RequestHeaderCA != nil {
			// Requested, not required: the authenticators verify, each against its own bundle, so a bad
			// certificate is a 401 Status instead of a failed handshake, token and anonymous clients
			// still get in, and a certificate of either bundle is accepted (kube's union of the two).
			srv.TLSConfig.ClientAuth = tls.RequestClientCert
			// Like kube, name both bundles' CAs as acceptable, so that a client with several
			// certificates picks one the server trusts. Read at each handshake: the bundles reload.
			cas, base := dynamiccert.NewCAUnion(sec.ClientCA, sec.RequestHeaderCA), srv.TLSConfig
			srv.TLSConfig.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
				c := base.Clone()
				c.ClientCAs = cas.Pool()
				return c, nil
			}
		}
		h2 := &http2.Server{
			MaxConcurrentStreams:     uint32(sec.HTTP2MaxStreamsPerConnection),
			MaxUploadBufferPerStream: http2Buffer,
			MaxReadFrameSize:         http2Buffer,
		}
		if sec.HTTP2MaxStreamsPerConnection > 0 {
			h2.MaxUploadBufferPerConnection = http2Buffer * int32(sec.HTTP2MaxStreamsPerConnection)
		}
		if err := http2.ConfigureServer(srv, h2); err != nil {
			// ConfigureServer only fails on a TLS config that forbids HTTP/2's cipher suites.
			p.cfg.Logger.Warn("serving HTTP/1.1 only: the TLS settings do not allow HTTP/2", "err", err)
		}
		ln := tls.NewListener(b.secure, srv.TLSConfig)
		addr := displayAddress(sec.Address, b.secure)
		out = append(out, &httpServer{Server: srv, kind: "securely", addr: addr, url: "https://" + addr,
			authn: "required", serve: func() error { return srv.Serve(ln) }})
	}
	if b.insecure != nil {
		handler := p.chain(auth.Insecure, auth.Chain(auth.AlwaysAllow))
		if !p.cfg.InsecureServing.AnyHost {
			handler = filters.WithLoopbackHost(handler)
		}
		srv := p.newHTTPServer(handler, drain)
		addr := displayAddress(p.cfg.InsecureServing.Address, b.insecure)
		ln := b.insecure
		out = append(out, &httpServer{Server: srv, kind: "insecurely (no authentication, no authorization)", addr: addr,
			url: "http://" + addr, authn: "none: every request is system:unsecured in system:masters", serve: func() error { return srv.Serve(ln) }})
	}
	return out
}

// displayAddress is the address to tell the user: the configured one, with the port the listener got.
// Go reports a listener on 0.0.0.0 as [::], which is not what the user asked for.
func displayAddress(configured string, ln net.Listener) string {
	bound := ln.Addr().String()
	host, _, err := net.SplitHostPort(configured)
	if err != nil || host == "" {
		return bound
	}
	_, port, err := net.SplitHostPort(bound)
	if err != nil {
		return bound
	}
	return net.JoinHostPort(host, port)
}

// chain wraps the mux in the filters, outermost first as the filters package documents. Audit sits
// where kube has it, right inside authentication and outside impersonation (so refused
// impersonations are logged), with its ID set outside recovery; without a policy (c.Audit nil) its
// methods return what they are given and the chain has no audit filter at all.
func (p *PreparedServer) chain(authn auth.Authenticator, authz auth.Authorizer) http.Handler {
	c := p.cfg
	log := c.Logger
	var h http.Handler = p.mux
	limit := p.requestLimit
	if limit == nil {
		limit = filters.WithMaxInFlightLimit(c.MaxRequestsInFlight, c.MaxMutatingRequestsInFlight, p.metrics)
	}
	// A LIST waits for room in the memory budget once it is admitted and authorized, holding its
	// seats meanwhile as kube's work estimate does; a quarter of the request timeout, as APF's queues.
	budget := filters.NewMemoryBudget(c.MemoryBudget, c.RequestTimeout/4, c.ListStoredBytes)
	wrap := []func(http.Handler) http.Handler{
		filters.WithMaxRequestBody(c.MaxRequestBodyBytes),
		budget.Wrap,
		filters.WithAuthorization(c.Audit.Authorizer(authz), log),
		limit,
		filters.WithImpersonation(authz, log),
		c.Audit.WithAudit,
		filters.WithAuthentication(c.Audit.Authenticator(authn), log),
		filters.WithCORS(c.CORSAllowedOrigins),
		filters.WithTimeout(c.RequestTimeout),
		filters.WithCacheControl,
		filters.WithMetrics(p.metrics, log),
		filters.WithRequestInfo,
		filters.WithPanicRecovery(log),
		c.Audit.WithInit,
		filters.WithConnectionClose(&p.closing),
		filters.WithGrownStack,
	}
	for _, f := range wrap {
		h = f(h)
	}
	return h
}

// newHTTPServer is an http.Server with the limits both ports share.
func (p *PreparedServer) newHTTPServer(handler http.Handler, drain <-chan struct{}) *http.Server {
	return &http.Server{
		Handler:           handler,
		BaseContext:       longRunningDone(drain),
		MaxHeaderBytes:    1 << 20,
		ReadHeaderTimeout: 32 * time.Second,
		IdleTimeout:       90 * time.Second,
		ErrorLog:          httpErrorLog(p.cfg.Logger),
	}
}

// longRunningDone gives every request of a listener the channel that closes when the server stops
// accepting, so watches can end their streams cleanly before the drain. It is the connections' base
// context, which costs nothing per request.
func longRunningDone(drain <-chan struct{}) func(net.Listener) context.Context {
	ctx := request.WithLongRunningDone(context.Background(), drain)
	return func(net.Listener) context.Context { return ctx }
}

// httpErrorLog sends net/http's own messages (mostly TLS handshake errors from port scanners and
// clients that hang up) to the debug level.
func httpErrorLog(log *slog.Logger) *stdlog.Logger {
	return slog.NewLogLogger(log.Handler(), slog.LevelDebug)
}

// withJoin sends the paths under prefix to join, everything else to api.
func withJoin(api http.Handler, prefix string, join http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, prefix) {
			join.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
}
