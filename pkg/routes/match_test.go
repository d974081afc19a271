package routes

import (
	"testing"
)

func TestMatch(t *testing.T) {
	m, err := NewMatcher(Install(testAPI(t), InstallOptions{Profiling: true}))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		method, path string
		// route is the matched route's path, "" for none.
		route  string
		action Action
		params Params
		// allow is the Allow header for a 405 or a match.
		allow string
	}{
		{method: "GET", path: "/api/v1/namespaces/default/configmaps", route: "/api/v1/namespaces/{namespace}/configmaps", action: ActionList,
			params: Params{Namespace: "default"}, allow: "DELETE, GET, POST"},
		{method: "GET", path: "/api/v1/namespaces/default/configmaps/", route: "/api/v1/namespaces/{namespace}/configmaps", action: ActionList,
			params: Params{Namespace: "default"}, allow: "DELETE, GET, POST"},
		{method: "DELETE", path: "/api/v1/namespaces/default/configmaps/cm1", route: "/api/v1/namespaces/{namespace}/configmaps/{name}", action: ActionDelete,
			params: Params{Namespace: "default", Name: "cm1"}, allow: "DELETE, GET, PATCH, PUT"},
		{method: "GET", path: "/api/v1/configmaps", route: "/api/v1/configmaps", action: ActionList, allow: "GET"},
		{method: "GET", path: "/api/v1/watch/namespaces/kube-system/configmaps/x", route: "/api/v1/watch/namespaces/{namespace}/configmaps/{name}",
			action: ActionWatch, params: Params{Namespace: "kube-system", Name: "x"}, allow: "GET"},
		// A cluster-scoped resource whose item path has the shape of a namespaced list.
		{method: "GET", path: "/api/v1/namespaces/default", route: "/api/v1/namespaces/{name}", action: ActionGet, params: Params{Name: "default"}, allow: "DELETE, GET, PATCH, PUT"},
		{method: "PUT", path: "/api/v1/namespaces/default/finalize", route: "/api/v1/namespaces/{name}/finalize", action: ActionPut, params: Params{Name: "default"}, allow: "PUT"},
		{method: "PATCH", path: "/api/v1/namespaces/default/status", route: "/api/v1/namespaces/{name}/status", action: ActionPatch, params: Params{Name: "default"}, allow: "GET, PATCH, PUT"},
		{method: "GET", path: "/api/v1/namespaces/default/finalize", allow: "PUT"},
		{method: "POST", path: "/api/v1/configmaps", allow: "GET"},
		{method: "GET", path: "/apis/example.com/v1/namespaces/ns/widgets/w/scale", route: "/apis/example.com/v1/namespaces/{namespace}/widgets/{name}/scale",
			action: ActionGet, params: Params{Namespace: "ns", Name: "w"}, allow: "GET, PATCH, PUT"},
		{method: "GET", path: "/apis/example.com/v1beta1/gadgets/g", route: "/apis/example.com/v1beta1/gadgets/{name}", action: ActionGet, params: Params{Name: "g"}, allow: "DELETE, GET, PATCH, PUT"},
		// Non-resource routes, exact and below a prefix.
		{method: "GET", path: "/", route: "/", allow: "GET"},
		{method: "GET", path: "/healthz", route: "/healthz", allow: "GET"},
		{method: "GET", path: "/healthz/etcd", route: "/healthz/{path:*}", params: Params{Subpath: "etcd"}, allow: "GET"},
		{method: "GET", path: "/readyz/poststarthook/start-informers", route: "/readyz/{path:*}", params: Params{Subpath: "poststarthook/start-informers"}, allow: "GET"},
		{method: "GET", path: "/openapi/v3/apis/coordination.k8s.io/v1", route: "/openapi/v3/{path:*}", params: Params{Subpath: "apis/coordination.k8s.io/v1"}, allow: "GET"},
		{method: "GET", path: "/openapi/v3", route: "/openapi/v3", allow: "GET"},
		{method: "GET", path: "/debug/pprof/", route: "/debug/pprof/{path:*}", allow: "GET"},
		{method: "GET", path: "/debug/pprof/heap", route: "/debug/pprof/{path:*}", params: Params{Subpath: "heap"}, allow: "GET"},
		{method: "GET", path: "/apis/coordination.k8s.io", route: "/apis/coordination.k8s.io", allow: "GET"},
		{method: "GET", path: "/api/v1/", route: "/api/v1", allow: "GET"},
		{method: "POST", path: "/version", allow: "GET"},
		// Not found.
		{method: "GET", path: "/api/v1/namespaces/default/pods"},
		{method: "GET", path: "/api/v1/namespaces//configmaps"},
		{method: "GET", path: "/apis/apps/v1/deployments"},
		{method: "GET", path: "/api/v1/namespaces/default/configmaps/a/b"},
		{method: "GET", path: "/nope"},
		{method: "GET", path: ""},
		{method: "GET", path: "api/v1"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			got := m.Match(tt.method, tt.path)
			if tt.route == "" {
				if got.Route != nil {
					t.Fatalf("matched %s %s, want none", got.Route.Method, got.Route.Path)
				}
				if got.PathFound != (tt.allow != "") || got.Allow != tt.allow {
					t.Errorf("PathFound %v Allow %q, want Allow %q", got.PathFound, got.Allow, tt.allow)
				}
				return
			}
			if got.Route == nil {
				t.Fatalf("no match (PathFound %v, Allow %q), want %s", got.PathFound, got.Allow, tt.route)
			}
			if got.Route.Path != tt.route || got.Route.Method != tt.method || got.Route.Action != tt.action {
				t.Errorf("matched %s %s %s, want %s %s %s", got.Route.Method, got.Route.Path, got.Route.Action, tt.method, tt.route, tt.action)
			}
			if got.Params != tt.params {
				t.Errorf("params %+v, want %+v", got.Params, tt.params)
			}
			if got.Allow != tt.allow || !got.PathFound {
				t.Errorf("Allow %q PathFound %v, want %q", got.Allow, got.PathFound, tt.allow)
			}
		})
	}
}

// TestMatchEveryRoute: every route of the table is found by its own path with sample values.
func TestMatchEveryRoute(t *testing.T) {
	tb := Install(testAPI(t), InstallOptions{Profiling: true})
	m, err := NewMatcher(tb)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range tb.Routes {
		path := samplePath(r.Path)
		got := m.Match(r.Method, path)
		if got.Route == nil || got.Route.Path != r.Path || got.Route.Method != r.Method {
			t.Errorf("%s %s (as %s) matched %+v", r.Method, r.Path, path, got.Route)
		}
	}
}

func samplePath(p string) string {
	r := []byte{}
	for i := 0; i < len(p); i++ {
		switch {
		case len(p[i:]) >= len("{namespace}") && p[i:i+len("{namespace}")] == "{namespace}":
			r, i = append(r, "ns1"...), i+len("{namespace}")-1
		case len(p[i:]) >= len("{name}") && p[i:i+len("{name}")] == "{name}":
			r, i = append(r, "obj1"...), i+len("{name}")-1
		case len(p[i:]) >= len("{path:*}") && p[i:i+len("{path:*}")] == "{path:*}":
			r, i = append(r, "a/b"...), i+len("{path:*}")-1
		default:
			r = append(r, p[i])
		}
	}
	return string(r)
}

func TestMatchDoesNotAllocate(t *testing.T) {
	m, err := NewMatcher(Install(testAPI(t), InstallOptions{Profiling: true}))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/api/v1/namespaces/default/configmaps/cm1", "/healthz/etcd", "/api/v1/namespaces/default/pods", "/api/v1/"} {
		if n := testing.AllocsPerRun(100, func() { m.Match("GET", p) }); n != 0 {
			t.Errorf("Match(GET, %s) allocates %v times", p, n)
		}
	}
}

func TestNewMatcherRejectsDuplicates(t *testing.T) {
	tb := Install(Builtin(), InstallOptions{})
	tb.Routes = append(tb.Routes, tb.Routes[0])
	if _, err := NewMatcher(tb); err == nil {
		t.Fatal("a duplicate route was accepted")
	}
	if _, err := NewMatcher(Table{Routes: []Route{{Method: "GET", Path: "/a/{path:*}/b"}}}); err == nil {
		t.Fatal("{path:*} in the middle was accepted")
	}
}

func BenchmarkMatch(b *testing.B) {
	m, err := NewMatcher(Install(testAPI(b), InstallOptions{Profiling: true}))
	if err != nil {
		b.Fatal(err)
	}
	paths := []struct{ method, path string }{
		{"GET", "/api/v1/namespaces/default/configmaps/settings"},
		{"GET", "/api/v1/namespaces/default/configmaps"},
		{"PUT", "/api/v1/namespaces/default/finalize"},
		{"PATCH", "/apis/example.com/v1/namespaces/ns/widgets/w/status"},
		{"GET", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/leader"},
		{"GET", "/healthz/etcd"},
		{"GET", "/api/v1/namespaces/default/pods"},
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		p := paths[i%len(paths)]
		m.Match(p.method, p.path)
	}
}
