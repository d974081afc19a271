package routes

import (
	"path/filepath"
	"testing"
)

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
