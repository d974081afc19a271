package serve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"

	"github.com/apictl/apictl/pkg/routes"
	"github.com/apictl/apictl/pkg/serve/healthz"
)

// PreparedServer is a server with its health endpoints and index installed, ready to Run.
type PreparedServer struct {
	*Server
	shutdown *healthz.Gate
	// closing is set for the shutdown delay: responses ask clients to reconnect.
	closing atomic.Bool
	// ready closes when the listeners are bound and every post-start hook has finished.
	ready chan struct{}
}

// PrepareRun installs /healthz, /livez and /readyz with every check registered so far (post-start
// hooks included, and the shutdown check last on /readyz), and the index at /. Hooks and checks can
// no longer be added afterwards.
func (s *Server) PrepareRun() *PreparedServer {
	s.mu.Lock()
	s.prepared = true
	s.mu.Unlock()

	p := &PreparedServer{Server: s, shutdown: healthz.NewGate("shutdown", nil), ready: make(chan struct{})}
	var hookChecks []healthz.Checker
	for _, h := range s.postStartHooks {
		hookChecks = append(hookChecks, h.gate)
	}
	var livezHookChecks []healthz.Checker
	for _, c := range hookChecks {
		livezHookChecks = append(livezHookChecks, healthz.Delayed(c, s.cfg.LivezGracePeriod, time.Now))
	}
	checks := map[string][]healthz.Checker{
		"healthz": concat(s.healthChecks, s.livezChecks, hookChecks),
		"livez":   concat(s.healthChecks, s.livezChecks, livezHookChecks),
		"readyz":  concat(s.healthChecks, s.readyzChecks, hookChecks, []healthz.Checker{p.shutdown}),
	}
	for name, endpoint := range map[string]routes.Endpoint{"healthz": routes.EndpointHealthz, "livez": routes.EndpointLivez, "readyz": routes.EndpointReadyz} {
		s.mux.endpoints[endpoint] = healthEndpoint(healthz.Handler(name, checks[name], s.cfg.Logger), checks[name])
	}
	// A list of strings always encodes, so the error is nil.
	index, _ := jsonIndented(struct {
		Paths []string `json:"paths"`
	}{indexPaths(s.table, checks)})
	s.mux.endpoints[routes.EndpointIndex] = index
	return p
}

func concat(lists ...[]healthz.Checker) []healthz.Checker {
	var out []healthz.Checker
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// Ready closes once the listeners are bound and every post-start hook has finished.
func (p *PreparedServer) Ready() <-chan struct{} { return p.ready }

// Run serves until ctx ends, then shuts down gracefully (see the package comment). It returns an error
// if a listener cannot be bound, a listener fails, a post-start hook fails, or a shutdown hook fails.
func (p *PreparedServer) Run(ctx context.Context) error {
	log := p.cfg.Logger
	start := time.Now()
	listeners, err := p.listen()
	if err != nil {
		return err
	}
	drain := make(chan struct{}) // closes when the server stops accepting requests
	servers := p.newHTTPServers(listeners, drain)
	serveErr := make(chan error, len(servers))
	for _, srv := range servers {
		srv := srv
		go func() {
			if err := srv.serve(); err != nil && !errors.Is(err, http.ErrServerClosed) {
				serveErr <- fmt.Errorf("serving on %s: %w", srv.addr, err)
			}
		}()
		log.Info("serving "+srv.kind, "address", srv.url, "authentication", srv.authn)
	}

	hookCtx, stopHooks := context.WithCancel(context.WithoutCancel(ctx))
	defer stopHooks()
	if sec := p.cfg.SecureServing; sec != nil {
		go sec.Cert.Run(hookCtx, sec.ReloadInterval)
		if sec.ClientCA != nil {
			go sec.ClientCA.Run(hookCtx, sec.ReloadInterval)
		}
		if sec.RequestHeaderCA != nil {
			go sec.RequestHeaderCA.Run(hookCtx, sec.ReloadInterval)
		}
	}
	hookErr := make(chan error, 1)
	go func() { hookErr <- p.runPostStartHooks(hookCtx) }()

	var runErr error
	select {
	case <-ctx.Done():
	case err := <-serveErr:
		runErr = err
	case err := <-hookErr:
		if err != nil {
			runErr = err
			break
		}
		log.Info("the server is ready", "after", time.Since(start).Round(time.Millisecond))
		for _, h := range p.cfg.ReadyHints {
			log.Info(h.Message, h.Args...)
		}
		p.notify(daemon.SdNotifyReady)
		close(p.ready)
		// Start-up garbage (route tables, discovery, the PKI's parsing) is gone now: hand it back
		// to the OS, so that an idle server's resident memory is what it holds, not what it once
		// did. After readiness, so that it costs start-up nothing.
		debug.FreeOSMemory()
		select {
		case <-ctx.Done():
		case err := <-serveErr:
			runErr = err
		}
	}
	stopHooks()
	if err := p.shutdownSequence(servers, drain); err != nil {
		runErr = errors.Join(runErr, err)
	}
	return runErr
}

// runPostStartHooks runs every hook concurrently and opens its health gate when it succeeds.
func (p *PreparedServer) runPostStartHooks(ctx context.Context) error {
	var wg sync.WaitGroup
	errs := make([]error, len(p.postStartHooks))
	for i, h := range p.postStartHooks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			began := time.Now()
			if err := h.fn(ctx); err != nil {
				errs[i] = fmt.Errorf("post-start hook %q failed: %w", h.name, err)
				return
			}
			h.gate.Set(nil)
			p.cfg.Logger.Debug("post-start hook finished", "hook", h.name, "took", time.Since(began).Round(time.Millisecond))
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// shutdownSequence runs kube's shutdown: fail readyz, keep serving for the delay while pre-shutdown
// hooks run, stop accepting, end long-running requests, drain, run post-shutdown hooks.
func (p *PreparedServer) shutdownSequence(servers []*httpServer, drain chan struct{}) error {
	log := p.cfg.Logger
	t0 := time.Now()
	p.shutdown.Set(errors.New("process is shutting down"))
	p.closing.Store(true)
	log.Info("shutdown initiated: /readyz now fails", "delay", p.cfg.ShutdownDelayDuration)

	deadline, cancel := context.WithTimeout(context.Background(), p.cfg.ShutdownDelayDuration+p.cfg.ShutdownTimeout)
	defer cancel()
	hooksDone := make(chan error, 1)
	go func() { hooksDone <- p.runHooks(deadline, "pre-shutdown", p.preShutdownHooks) }()
	time.Sleep(p.cfg.ShutdownDelayDuration)
	hookErr := <-hooksDone
	log.Info("shutdown delay over and pre-shutdown hooks done: closing listeners", "after", time.Since(t0).Round(time.Millisecond))

	p.notify(daemon.SdNotifyStopping)
	close(drain)
	drainCtx, cancelDrain := context.WithTimeout(context.Background(), p.cfg.ShutdownTimeout)
	defer cancelDrain()
	var wg sync.WaitGroup
	for _, srv := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := srv.Shutdown(drainCtx); err != nil {
				log.Warn("in-flight requests did not finish within --shutdown-timeout: closing their connections",
					"listener", srv.kind, "timeout", p.cfg.ShutdownTimeout)
				_ = srv.Close()
			}
		}()
	}
	wg.Wait()
	log.Info("listeners closed and in-flight requests drained", "after", time.Since(t0).Round(time.Millisecond))

	postCtx, cancelPost := context.WithTimeout(context.Background(), p.cfg.ShutdownTimeout)
	defer cancelPost()
	postErr := p.runHooks(postCtx, "post-shutdown", p.postShutdownHooks)
	log.Info("shutdown complete", "took", time.Since(t0).Round(time.Millisecond))
	return errors.Join(hookErr, postErr)
}

// runHooks runs hooks one after another, in registration order, logging each with its duration.
func (p *PreparedServer) runHooks(ctx context.Context, kind string, hooks []namedHook) error {
	var errs []error
	for _, h := range hooks {
		began := time.Now()
		if err := h.fn(ctx); err != nil {
			errs = append(errs, fmt.Errorf("%s hook %q failed: %w", kind, h.name, err))
			continue
		}
		p.cfg.Logger.Info(kind+" hook finished", "hook", h.name, "took", time.Since(began).Round(time.Millisecond))
	}
	return errors.Join(errs...)
}

// notify tells the service manager about a state change; outside systemd it does nothing.
func (p *PreparedServer) notify(state string) {
	send := p.cfg.Notify
	if send == nil {
		send = func(state string) error {
			// Keep NOTIFY_SOCKET set: STOPPING=1 follows READY=1.
			_, err := daemon.SdNotify(false, state)
			return err
		}
	}
	if err := send(state); err != nil {
		p.cfg.Logger.Warn("unable to notify the service manager", "state", state, "err", err)
	}
}
