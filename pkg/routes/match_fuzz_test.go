package routes

import (
	"strings"
	"testing"
)

// maxFuzzPath bounds fuzzed paths: a request line longer than this never reaches the matcher (Go's
// server refuses headers past 1 MiB) and longer inputs only slow the fuzzer down.
const maxFuzzPath = 64 << 10

// FuzzMatch feeds arbitrary methods and request paths to the matcher of the built-in API plus the
// test CRDs. It must never panic, and what it answers must hold together: a matched route has the
// request's method, lists it in Allow, and its path with the captured parameters put back is the
// request's path (less a trailing slash the matcher dropped); a 405 names methods; a 404 names none.
func FuzzMatch(f *testing.F) {
	table := Install(testAPI(f), InstallOptions{Profiling: true})
	m, err := NewMatcher(table)
	if err != nil {
		f.Fatal(err)
	}
	for _, tc := range []struct{ method, path string }{
		{"GET", "/api/v1/namespaces/default/configmaps"},
		{"GET", "/api/v1/namespaces/default/configmaps/"},
		{"PATCH", "/api/v1/namespaces/default/configmaps/cm1"},
		{"GET", "/api/v1/watch/namespaces/kube-system/configmaps/x"},
		{"PUT", "/api/v1/namespaces/default/finalize"},
		{"GET", "/apis/example.com/v1/namespaces/ns/widgets/w/scale"},
		{"DELETE", "/apis/example.com/v1beta1/gadgets/g"},
		{"GET", "/readyz/poststarthook/start-informers"},
		{"GET", "/openapi/v3/apis/coordination.k8s.io/v1"},
		{"GET", "/debug/pprof/"},
		{"POST", "/version"},
		{"GET", "/"},
		{"GET", "//"},
		{"GET", "/api/v1/namespaces//configmaps"},
		{"GET", "/api/v1/namespaces/default/configmaps/a/b"},
		{"GET", "/api/v1/namespaces/%2F/configmaps"},
		{"OPTIONS", "/api/v1/namespaces/{namespace}/configmaps/{name}"},
		{"GET", "api/v1"},
		{"", ""},
	} {
		f.Add(tc.method, tc.path)
	}
	// The routes of two resources, built-in and custom, with sample parameters (all of them would
	// make the baseline the fuzzer gathers at each start slow for little gain).
	fill := strings.NewReplacer("{namespace}", "ns", "{name}", "n", "{path:*}", "a/b")
	for _, r := range table.Routes {
		if r.Resource == "configmaps" || r.Resource == "widgets" {
			f.Add(r.Method, fill.Replace(r.Path))
		}
	}
	f.Fuzz(func(t *testing.T, method, path string) {
		if len(path) > maxFuzzPath || len(method) > 64 {
			return
		}
		got := m.Match(method, path)
		if again := m.Match(method, path); again != got {
			t.Fatalf("Match(%q, %q) changed between calls: %+v, then %+v", method, path, got, again)
		}
		if got.Route == nil {
			if got.PathFound == (got.Allow == "") {
				t.Fatalf("Match(%q, %q): no route, PathFound %v with Allow %q", method, path, got.PathFound, got.Allow)
			}
			if got.Params != (Params{}) {
				t.Fatalf("Match(%q, %q): no route but params %+v", method, path, got.Params)
			}
			return
		}
		r := got.Route
		if r.Method != method {
			t.Fatalf("Match(%q, %q) matched %s %s", method, path, r.Method, r.Path)
		}
		if !got.PathFound || !containsMethod(got.Allow, method) {
			t.Fatalf("Match(%q, %q) matched %s but PathFound %v, Allow %q", method, path, r.Path, got.PathFound, got.Allow)
		}
		for _, p := range []string{got.Params.Namespace, got.Params.Name} {
			if strings.Contains(p, "/") {
				t.Fatalf("Match(%q, %q) captured %q, which spans segments", method, path, p)
			}
		}
		if strings.Contains(r.Path, "{namespace}") && got.Params.Namespace == "" ||
			strings.Contains(r.Path, "{name}") && got.Params.Name == "" {
			t.Fatalf("Match(%q, %q) matched %s with an empty parameter: %+v", method, path, r.Path, got.Params)
		}
		rebuilt := strings.NewReplacer("{namespace}", got.Params.Namespace, "{name}", got.Params.Name,
			"{path:*}", got.Params.Subpath).Replace(r.Path)
		if rebuilt != path && rebuilt != strings.TrimSuffix(path, "/") {
			t.Fatalf("Match(%q, %q) matched %s with %+v, which rebuilds %q", method, path, r.Path, got.Params, rebuilt)
		}
	})
}

// containsMethod reports whether allow, an Allow header value ("GET, PUT"), lists method.
func containsMethod(allow, method string) bool {
	for _, m := range strings.Split(allow, ", ") {
		if m == method {
			return true
		}
	}
	return false
}
