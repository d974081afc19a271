package routes

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files with the current output")

// golden compares got with testdata/<name>, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (create it with go test ./pkg/routes -update): %v", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (if the change is intended, run go test ./pkg/routes -update)\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

// findRoute returns the route with method and path.
func findRoute(t *testing.T, tb Table, method, path string) *Route {
	t.Helper()
	for i := range tb.Routes {
		if tb.Routes[i].Method == method && tb.Routes[i].Path == path {
			return &tb.Routes[i]
		}
	}
	t.Fatalf("no route %s %s", method, path)
	return nil
}

// testAPI is the built-in API plus the CRDs of testdata/crds/valid.
func testAPI(t testing.TB) *API {
	t.Helper()
	crds, err := ReadCRDFiles([]string{filepath.Join("testdata", "crds", "valid")})
	if err != nil {
		t.Fatal(err)
	}
	api, err := Builtin().WithCRDs(crds)
	if err != nil {
		t.Fatal(err)
	}
	return api
}
