package routes

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRegistrationDiscoveryMatchesKube compares the discovery of apiregistration.k8s.io and
// admissionregistration.k8s.io with kube-apiserver v1.37.2's answers, recorded in
// testdata/discovery/kube-registration.txt: the group and group version documents byte for byte,
// the groups' entries of aggregated /apis, and their places in /apis among the groups apictl serves.
func TestRegistrationDiscoveryMatchesKube(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "discovery", "kube-registration.txt"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	api := Builtin()
	d := NewDiscovery(api, DiscoveryOptions{})
	m, err := NewMatcher(Install(api, InstallOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	marshal := func(v any) string {
		out, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	for i := 0; i+1 < len(lines); i++ {
		path, want := lines[i], lines[i+1]
		switch {
		case strings.HasPrefix(path, "/apis/"):
			route := m.Match("GET", path).Route
			if route == nil {
				t.Fatalf("no route for %s", path)
			}
			doc, ok := d.Document(route)
			if !ok {
				t.Fatalf("no discovery document for %s", path)
			}
			if got := marshal(doc); got != want {
				t.Errorf("%s\n got %s\nwant %s", path, got, want)
			}
			i++
		case path == "/apis (aggregated)":
			agg, ok := d.Aggregated(m.Match("GET", "/apis").Route)
			if !ok {
				t.Fatal("no aggregated /apis")
			}
			items := map[string]string{}
			for _, it := range agg.Items {
				items[it.Name] = marshal(it)
			}
			for ; i+1 < len(lines) && strings.HasPrefix(lines[i+1], "{"); i++ {
				var item struct {
					Metadata struct{ Name string } `json:"metadata"`
				}
				if err := json.Unmarshal([]byte(lines[i+1]), &item); err != nil {
					t.Fatal(err)
				}
				if got := items[item.Metadata.Name]; got != lines[i+1] {
					t.Errorf("aggregated %s\n got %s\nwant %s", item.Metadata.Name, got, lines[i+1])
				}
			}
		case path == "/apis (groups)":
			kube := strings.Fields(want)
			var served []string
			for _, g := range d.GroupList.Groups {
				served = append(served, g.Name)
			}
			var inKubeOrder []string
			for _, g := range kube {
				if slices.Contains(served, g) {
					inKubeOrder = append(inKubeOrder, g)
				}
			}
			if !slices.Equal(served, inKubeOrder) {
				t.Errorf("/apis lists %q, kube's order of them is %q", served, inKubeOrder)
			}
			i++
		}
	}
}
