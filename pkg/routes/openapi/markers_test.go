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

// TestServiceMarkers compares the structure of the definitions services, endpoints and
// endpointslices use in our /openapi/v2 with kube-apiserver v1.37.2's, recorded in
// testdata/kube-services-v2.json: the properties, their types and references, the required fields
// and every x-kubernetes-* extension (server-side apply reads them). Descriptions are left out: kube
// adds the "Possible enum values" of its +enum markers, which apictl does not publish.
func TestServiceMarkers(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "kube-services-v2.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]map[string]any
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	api := routes.Builtin()
	v2, err := BuildV2(routes.Install(api, routes.InstallOptions{}), api, Options{})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(v2.Definitions)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]map[string]any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	var names []string
	for name := range want {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		g, ok := got[name]
		if !ok {
			t.Errorf("no definition %s", name)
			continue
		}
		if gs, ws := structure(g), structure(want[name]); !reflect.DeepEqual(gs, ws) {
			gj, _ := json.MarshalIndent(gs, "", " ")
			wj, _ := json.MarshalIndent(ws, "", " ")
			t.Errorf("%s:\ngot  %s\nwant %s", name, gj, wj)
		}
	}
}

// structure is a definition without descriptions and enums.
func structure(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range v {
			if k == "description" || k == "enum" || strings.HasPrefix(k, "default") {
				continue
			}
			out[k] = structure(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = structure(x)
		}
		return out
	}
	return v
}
