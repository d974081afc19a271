package openapi

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/apictl/apictl/pkg/routes"
)

// TestAPIExtensionsDefinitions compares the definitions of apiextensions.k8s.io/v1 in our
// /openapi/v2 and /openapi/v3/apis/apiextensions.k8s.io/v1 with kube-apiserver v1.37.2's, recorded
// in testdata/kube-apiextensions-v1.json (the io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.*
// definitions of both documents, fetched from the reference server with the admin token).
func TestAPIExtensionsDefinitions(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "kube-apiextensions-v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]map[string]any
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	api := routes.Builtin()
	table := routes.Install(api, routes.InstallOptions{})
	v2, err := BuildV2(table, api, Options{})
	if err != nil {
		t.Fatal(err)
	}
	v3, err := BuildV3(table, api, Options{})
	if err != nil {
		t.Fatal(err)
	}
	v3doc, ok := v3["apis/apiextensions.k8s.io/v1"]
	if !ok {
		t.Fatalf("no v3 document for apiextensions.k8s.io/v1 among %d", len(v3))
	}
	got := map[string]map[string]any{
		"v2": apiextensionsDefs(t, v2.Definitions),
		"v3": apiextensionsDefs(t, v3doc.Components.Schemas),
	}
	for _, version := range []string{"v2", "v3"} {
		var names []string
		for name := range want[version] {
			names = append(names, name)
		}
		sort.Strings(names)
		if len(got[version]) != len(want[version]) {
			t.Errorf("%s: %d apiextensions definitions, want %d", version, len(got[version]), len(want[version]))
		}
		for _, name := range names {
			if !reflect.DeepEqual(got[version][name], want[version][name]) {
				g, _ := json.MarshalIndent(got[version][name], "", " ")
				w, _ := json.MarshalIndent(want[version][name], "", " ")
				t.Errorf("%s %s:\ngot  %s\nwant %s", version, name, g, w)
			}
		}
	}
}

// apiextensionsDefs is the JSON of the apiextensions v1 definitions among defs.
func apiextensionsDefs[S any](t *testing.T, defs map[string]S) map[string]any {
	t.Helper()
	out := map[string]any{}
	for name, s := range defs {
		if !strings.HasPrefix(name, "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.") {
			continue
		}
		raw, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatal(err)
		}
		out[name] = v
	}
	return out
}
