// Package healthz serves /healthz, /livez and /readyz with kube's semantics: named checks, ?verbose,
// repeatable ?exclude=, one path per check, reasons withheld from the public aggregate.
package healthz

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
)

// Checker is one named health check.
type Checker interface {
	Name() string
	Check(r *http.Request) error
}

// Detailer is a Checker with more to say than "ok" when it passes: the verbose aggregate prints the
// detail after "ok", in parentheses. kube's checks have none; apictl's leader election check says
// which cluster-wide controllers this replica runs.
type Detailer interface {
	Detail() string
}

type namedCheck struct {
	name  string
	check func(*http.Request) error
}

func (c namedCheck) Name() string                { return c.name }
func (c namedCheck) Check(r *http.Request) error { return c.check(r) }

// NamedCheck makes a Checker from a function.
func NamedCheck(name string, check func(r *http.Request) error) Checker {
	return namedCheck{name: name, check: check}
}

// Ping always passes: it shows the server answers at all.
var Ping = NamedCheck("ping", func(*http.Request) error { return nil })

// Delayed passes until delay has passed since now, then reports check: the --livez-grace-period for
// start-up checks, so a slow start is not mistaken for a dead server.
func Delayed(check Checker, delay time.Duration, now func() time.Time) Checker {
	deadline := now().Add(delay)
	return NamedCheck(check.Name(), func(r *http.Request) error {
		if now().Before(deadline) {
			return nil
		}
		return check.Check(r)
	})
}

// Handler serves the aggregate endpoint name (healthz, livez or readyz) over checks.
func Handler(name string, checks []Checker, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		query := r.URL.Query()
		excluded := map[string]bool{}
		for _, e := range query["exclude"] {
			excluded[strings.TrimSpace(e)] = true
		}
		var out, failedLog bytes.Buffer
		var failed []string
		for _, c := range checks {
			if excluded[c.Name()] {
				delete(excluded, c.Name())
				fmt.Fprintf(&out, "[+]%s excluded: ok\n", c.Name())
				continue
			}
			if err := c.Check(r); err != nil {
				// The aggregate is public, so the reason stays in the log; /<name>/<check> shows it.
				fmt.Fprintf(&out, "[-]%s failed: reason withheld\n", c.Name())
				fmt.Fprintf(&failedLog, "[-]%s failed: %v\n", c.Name(), err)
				failed = append(failed, c.Name())
				continue
			}
			fmt.Fprintf(&out, "[+]%s ok", c.Name())
			if d, ok := c.(Detailer); ok {
				if detail := d.Detail(); detail != "" {
					fmt.Fprintf(&out, " (%s)", detail)
				}
			}
			out.WriteByte('\n')
		}
		if len(excluded) > 0 {
			names := make([]string, 0, len(excluded))
			for n := range excluded {
				names = append(names, fmt.Sprintf("%q", n))
			}
			sort.Strings(names)
			fmt.Fprintf(&out, "warn: some health checks cannot be excluded: no matches for %s\n", strings.Join(names, ","))
		}
		if len(failed) > 0 {
			log.Debug(name+" check failed", "checks", strings.Join(failed, ","), "details", failedLog.String())
			http.Error(w, fmt.Sprintf("%s%s check failed", out.String(), name), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if _, verbose := query["verbose"]; !verbose {
			fmt.Fprint(w, "ok")
			return
		}
		_, _ = out.WriteTo(w)
		fmt.Fprintf(w, "%s check passed\n", name)
	})
}

// CheckHandler serves one check at /<endpoint>/<check>, with its error shown.
func CheckHandler(c Checker) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := c.Check(r); err != nil {
			http.Error(w, fmt.Sprintf("internal server error: %v", err), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		fmt.Fprint(w, "ok")
	})
}

// Gate is a check that fails with a fixed reason until it is opened or after it is closed: post-start
// hooks pass once they finish, the shutdown check fails once shutdown begins.
type Gate struct {
	name string
	mu   sync.RWMutex
	err  error
}

// NewGate returns a gate that starts failing with reason (nil: passing).
func NewGate(name string, reason error) *Gate { return &Gate{name: name, err: reason} }

// Name returns the check's name.
func (g *Gate) Name() string { return g.name }

// Check reports the gate's current state.
func (g *Gate) Check(*http.Request) error {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.err
}

// Set makes the gate report err (nil: passing).
func (g *Gate) Set(err error) {
	g.mu.Lock()
	g.err = err
	g.mu.Unlock()
}
