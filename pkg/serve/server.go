package serve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"

	"github.com/apictl/apictl/pkg/routes"
	"github.com/apictl/apictl/pkg/serve/filters"
	"github.com/apictl/apictl/pkg/serve/healthz"
)

// HookFunc is a post-start, pre-shutdown or post-shutdown hook. Its context ends when the hook should
// give up: at shutdown for post-start hooks, at the shutdown deadline for the others.
type HookFunc func(ctx context.Context) error

type namedHook struct {
	name string
	fn   HookFunc
	gate *healthz.Gate // post-start hooks only
}

// Server is a created, not yet running API server.
type Server struct {
	cfg *completedConfig
	// table is the route table at start; only its non-resource routes, which never change, are
	// read from it (the index at /).
	table    routes.Table
	mux      *dispatcher
	registry *prometheus.Registry
	metrics  *filters.Metrics
	// gatherers are the metrics of libraries that keep their own registry, served on /metrics too.
	gatherers []prometheus.Gatherer
	// requestLimit, when set, takes the place of the max-in-flight limit in the chain (API Priority
	// and Fairness).
	requestLimit func(http.Handler) http.Handler

	// stateMu serializes SetAPI, so that each state reuses from the one before it.
	stateMu sync.Mutex

	mu                sync.Mutex
	prepared          bool
	postStartHooks    []namedHook
	preShutdownHooks  []namedHook
	postShutdownHooks []namedHook
	healthChecks      []healthz.Checker // healthz, livez and readyz
	readyzChecks      []healthz.Checker // readyz only
	livezChecks       []healthz.Checker // healthz and livez, not readyz
	hookNames         map[string]bool
}

// New creates the server: the route table and its matcher, discovery, metrics, the health checks.
// It binds nothing and starts nothing.
func (c CompletedConfig) New() (*Server, error) {
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("invalid server configuration: %w", err)
	}
	st, err := c.newAPIState(c.API, nil)
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg:       c.completedConfig,
		table:     st.table,
		registry:  prometheus.NewRegistry(),
		hookNames: map[string]bool{},
	}
	s.mux = &dispatcher{resources: c.Resources, endpoints: map[routes.Endpoint]func(http.ResponseWriter, *http.Request, *routes.Match){}}
	s.mux.state.Store(st)
	if err := s.registry.Register(collectors.NewGoCollector()); err != nil {
		return nil, fmt.Errorf("registering Go metrics: %w", err)
	}
	if err := s.registry.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})); err != nil {
		return nil, fmt.Errorf("registering process metrics: %w", err)
	}
	if s.metrics, err = filters.NewMetrics(s.registry); err != nil {
		return nil, fmt.Errorf("registering request metrics: %w", err)
	}
	logCheck := healthz.NamedCheck("log", func(*http.Request) error { return nil })
	if c.LogWriter != nil {
		logCheck = healthz.NamedCheck("log", func(*http.Request) error { return c.LogWriter.Err() })
	}
	s.healthChecks = []healthz.Checker{healthz.Ping, logCheck}

	version, err := jsonIndented(c.Version)
	if err != nil {
		return nil, fmt.Errorf("encoding the version: %w", err)
	}
	// The gatherers are read at each scrape: they are added while the server is built, after this.
	metrics := promhttp.HandlerFor(s.Metrics(), promhttp.HandlerOpts{})
	e := s.mux.endpoints
	e[routes.EndpointVersion] = version
	e[routes.EndpointMetrics] = func(w http.ResponseWriter, r *http.Request, _ *routes.Match) { metrics.ServeHTTP(w, r) }
	e[routes.EndpointProfiling] = profilingEndpoint
	addOpenIDEndpoints(e, c.ServiceAccountTokens, c.ExternalAddress, c.Logger)
	if c.Audit != nil {
		// After the drain, as kube shuts its audit backend down: every finished request is logged.
		if err := s.AddPostShutdownHook("audit-log", c.Audit.Close); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// RequestMetrics are the server's request metrics, for a request limit set by SetRequestLimit.
func (s *Server) RequestMetrics() *filters.Metrics { return s.metrics }

// Registry is the server's Prometheus registry, for components that export their own metrics.
func (s *Server) Registry() prometheus.Registerer { return s.registry }

// Metrics gathers what /metrics serves: the server's registry and every gatherer added to it.
func (s *Server) Metrics() prometheus.Gatherer {
	return prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		s.mu.Lock()
		g := append(prometheus.Gatherers{s.registry}, s.gatherers...)
		s.mu.Unlock()
		return g.Gather()
	})
}

// ServeEndpoint has h answer a non-resource route of the table that the server itself does not
// serve, such as apictl's status, behind the same filters as every other route.
func (s *Server) ServeEndpoint(e routes.Endpoint, h http.Handler) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.prepared {
		return fmt.Errorf("unable to serve endpoint %s: the server is already prepared to run", e)
	}
	if _, taken := s.mux.endpoints[e]; taken {
		return fmt.Errorf("unable to serve endpoint %s: it is already served", e)
	}
	s.mux.endpoints[e] = func(w http.ResponseWriter, r *http.Request, _ *routes.Match) { h.ServeHTTP(w, r) }
	return nil
}

// AddMetrics serves g's metrics on /metrics beside the server's own; its names must not be the
// server's.
func (s *Server) AddMetrics(g prometheus.Gatherer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gatherers = append(s.gatherers, g)
}

// SetRequestLimit puts limit where the max-in-flight limit is in the handler chain of both ports,
// right outside authorization, as kube puts API Priority and Fairness there.
func (s *Server) SetRequestLimit(limit func(http.Handler) http.Handler) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.prepared {
		return errors.New("unable to set the request limit: the server is already prepared to run")
	}
	s.requestLimit = limit
	return nil
}

// AddPostStartHook registers fn to run once the listeners are bound. Until it returns, the
// poststarthook/<name> check fails, so /readyz reports the server not ready.
func (s *Server) AddPostStartHook(name string, fn HookFunc) error {
	return s.addHook(&s.postStartHooks, name, fn, true)
}

// AddPreShutdownHook registers fn to run when shutdown begins, while requests are still served.
func (s *Server) AddPreShutdownHook(name string, fn HookFunc) error {
	return s.addHook(&s.preShutdownHooks, name, fn, false)
}

// AddPostShutdownHook registers fn to run after the listeners closed and requests drained; storage
// closes here, last.
func (s *Server) AddPostShutdownHook(name string, fn HookFunc) error {
	return s.addHook(&s.postShutdownHooks, name, fn, false)
}

func (s *Server) addHook(list *[]namedHook, name string, fn HookFunc, postStart bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case name == "" || fn == nil:
		return errors.New("a hook needs a name and a function")
	case s.prepared:
		return fmt.Errorf("unable to add hook %q: the server is already prepared to run", name)
	case s.hookNames[name]:
		return fmt.Errorf("unable to add hook %q because it was already registered", name)
	}
	s.hookNames[name] = true
	h := namedHook{name: name, fn: fn}
	if postStart {
		h.gate = healthz.NewGate("poststarthook/"+name, errors.New("not finished"))
	}
	*list = append(*list, h)
	return nil
}

// AddHealthChecks adds checks to /healthz, /livez and /readyz.
func (s *Server) AddHealthChecks(checks ...healthz.Checker) error {
	return s.addChecks(&s.healthChecks, checks)
}

// AddLivezChecks adds checks to /healthz and /livez but not /readyz: checks whose failure a restart
// mends and that say nothing of whether the server can serve, such as kube-controller-manager's
// leaderElection (a leader whose controllers are stuck).
func (s *Server) AddLivezChecks(checks ...healthz.Checker) error {
	return s.addChecks(&s.livezChecks, checks)
}

// AddReadyzChecks adds checks to /readyz only.
func (s *Server) AddReadyzChecks(checks ...healthz.Checker) error {
	return s.addChecks(&s.readyzChecks, checks)
}

func (s *Server) addChecks(list *[]healthz.Checker, checks []healthz.Checker) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.prepared {
		return errors.New("unable to add health checks: the server is already prepared to run")
	}
	*list = append(*list, checks...)
	return nil
}
