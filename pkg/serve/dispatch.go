package serve

import (
	"encoding/json"
	"net/http"
	"net/http/pprof"
	"sort"
	"strings"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apictl/apictl/pkg/routes"
	"github.com/apictl/apictl/pkg/serve/healthz"
	"github.com/apictl/apictl/pkg/serve/status"
)

// ResourceHandler serves the resource routes of the table (LIST, GET, POST, ...). The REST handlers
// implement it; the route and its path parameters come from the matcher.
type ResourceHandler interface {
	ServeResource(w http.ResponseWriter, r *http.Request, route *routes.Route, params routes.Params)
}

// dispatcher is the server's mux: the route table's matcher decides what a request is, so that what
// `apictl routes` prints is exactly what the server answers.
type dispatcher struct {
	// state is the current API: read once per request.
	state     atomic.Pointer[apiState]
	resources ResourceHandler
	// endpoints serve the routes outside the API, which never change; discovery and OpenAPI come
	// with the API state.
	endpoints map[routes.Endpoint]func(w http.ResponseWriter, r *http.Request, m *routes.Match)
}

func (d *dispatcher) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	st := d.state.Load()
	// The aggregator: a group version another server serves is proxied to it (after authentication
	// and authorization, which the filters did). Nil without remote group versions, so that local
	// requests pay one comparison.
	if rs := st.remoteRoutes; rs != nil {
		if h := rs.handler(r.URL.Path); h != nil {
			h.ServeHTTP(w, r)
			return
		}
	}
	m := st.matcher.Match(r.Method, r.URL.Path)
	switch {
	case m.Route == nil && m.PathFound:
		w.Header().Set("Allow", m.Allow)
		status.Write(w, r, &metav1.Status{
			Status:  metav1.StatusFailure,
			Message: "the server does not allow this method on the requested resource",
			Reason:  metav1.StatusReasonMethodNotAllowed,
			Details: &metav1.StatusDetails{},
			Code:    http.StatusMethodNotAllowed,
		})
	case m.Route == nil:
		st.notFound(w, r)
	case m.Route.Endpoint != "":
		switch m.Route.Endpoint {
		case routes.EndpointAPIVersions, routes.EndpointAPIGroupList, routes.EndpointAPIGroup, routes.EndpointAPIResourceList:
			st.discovery.serve(w, r, &m)
			return
		case routes.EndpointOpenAPIV2:
			st.openAPI.serveV2(w, r, &m)
			return
		case routes.EndpointOpenAPIV3:
			st.openAPI.serveV3(w, r, &m)
			return
		}
		serve, ok := d.endpoints[m.Route.Endpoint]
		if !ok {
			st.notFound(w, r)
			return
		}
		serve(w, r, &m)
	case d.resources == nil:
		status.Write(w, r, &metav1.Status{
			Status: metav1.StatusFailure, Message: "this server has no storage for resources",
			Reason: metav1.StatusReasonServiceUnavailable, Details: &metav1.StatusDetails{}, Code: http.StatusServiceUnavailable,
		})
	default:
		d.resources.ServeResource(w, r, m.Route, m.Params)
	}
}

// notFound answers a path outside the route table as kube does: a Status below /api and a served
// group's /apis/<group>, where its API handlers answer, and the mux's plain-text 404 elsewhere.
func (d *apiState) notFound(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	if p == "/api" || strings.HasPrefix(p, "/api/") {
		NotFound(w, r)
		return
	}
	if rest, ok := strings.CutPrefix(p, "/apis/"); ok {
		group, _, _ := strings.Cut(rest, "/")
		if d.groups[group] {
			NotFound(w, r)
			return
		}
	}
	http.NotFound(w, r)
}

// NotFound is kube's answer for an API path it does not serve.
func NotFound(w http.ResponseWriter, r *http.Request) {
	status.Write(w, r, &metav1.Status{
		Status:  metav1.StatusFailure,
		Message: "the server could not find the requested resource",
		Reason:  metav1.StatusReasonNotFound,
		Details: &metav1.StatusDetails{},
		Code:    http.StatusNotFound,
	})
}

// healthEndpoint serves /healthz, /livez or /readyz and /<endpoint>/<check>.
func healthEndpoint(aggregate http.Handler, checks []healthz.Checker) func(http.ResponseWriter, *http.Request, *routes.Match) {
	byName := make(map[string]http.Handler, len(checks))
	for _, c := range checks {
		byName[c.Name()] = healthz.CheckHandler(c)
	}
	return func(w http.ResponseWriter, r *http.Request, m *routes.Match) {
		if m.Params.Subpath == "" && !strings.HasSuffix(r.URL.Path, "/") {
			aggregate.ServeHTTP(w, r)
			return
		}
		h, ok := byName[m.Params.Subpath]
		if !ok {
			http.NotFound(w, r)
			return
		}
		h.ServeHTTP(w, r)
	}
}

// profilingEndpoint serves net/http/pprof's handlers on the server's own mux, never the default one.
func profilingEndpoint(w http.ResponseWriter, r *http.Request, m *routes.Match) {
	switch m.Params.Subpath {
	case "":
		if !strings.HasSuffix(r.URL.Path, "/") {
			http.Redirect(w, r, "/debug/pprof/", http.StatusMovedPermanently)
			return
		}
		pprof.Index(w, r)
	case "cmdline":
		pprof.Cmdline(w, r)
	case "profile":
		pprof.Profile(w, r)
	case "symbol":
		pprof.Symbol(w, r)
	case "trace":
		pprof.Trace(w, r)
	default:
		pprof.Index(w, r) // named profiles: heap, goroutine, ...
	}
}

// indexPaths lists what / shows, as kube does: every non-resource path, and one path per health check.
func indexPaths(t routes.Table, checks map[string][]healthz.Checker) []string {
	seen := map[string]bool{}
	for i := range t.Routes {
		r := &t.Routes[i]
		if r.IsResource() || r.Path == "/" {
			continue
		}
		p, wildcard := strings.CutSuffix(r.Path, "/{path:*}")
		seen[p] = true
		if wildcard && r.Endpoint != routes.EndpointHealthz && r.Endpoint != routes.EndpointLivez && r.Endpoint != routes.EndpointReadyz {
			seen[p+"/"] = true
		}
	}
	for endpoint, list := range checks {
		for _, c := range list {
			seen["/"+endpoint+"/"+c.Name()] = true
		}
	}
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// jsonIndented is a precomputed response of / and /version: indented JSON, as kube serves them.
func jsonIndented(v any) (func(http.ResponseWriter, *http.Request, *routes.Match), error) {
	body, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return func(w http.ResponseWriter, _ *http.Request, _ *routes.Match) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body)
	}, nil
}
