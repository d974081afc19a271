package routes

import (
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apictl/apictl/internal/golden"
)

// TestDiscoveryConfigMaps is issue 3's must-show: configmaps in /api/v1, byte for byte as kube.
func TestDiscoveryConfigMaps(t *testing.T) {
	d := NewDiscovery(Builtin(), DiscoveryOptions{ServerAddress: "10.0.0.1:6443"})
	out, err := json.Marshal(d.ResourceLists[schema.GroupVersion{Version: "v1"}])
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"name":"configmaps","singularName":"configmap","namespaced":true,"kind":"ConfigMap",` +
		`"verbs":["create","delete","deletecollection","get","list","patch","update","watch"],"shortNames":["cm"],"storageVersionHash":"qFsyl6wFWjQ="}`
	if !strings.Contains(string(out), want) {
		t.Errorf("/api/v1 lacks %s:\n%s", want, out)
	}
	if !strings.HasPrefix(string(out), `{"kind":"APIResourceList","groupVersion":"v1","resources":[`) {
		t.Errorf("/api/v1 starts %.80s, want kube's prefix without apiVersion", out)
	}
	// Real clusters list these in this order, subresources after their parent.
	const ns = `{"name":"namespaces","singularName":"namespace","namespaced":false,"kind":"Namespace","verbs":["create","delete","get","list","patch","update","watch"],"shortNames":["ns"],"storageVersionHash":"Q3oi5N2YM8M="},` +
		`{"name":"namespaces/finalize","singularName":"","namespaced":false,"kind":"Namespace","verbs":["update"]},` +
		`{"name":"namespaces/status","singularName":"","namespaced":false,"kind":"Namespace","verbs":["get","patch","update"]}`
	if !strings.Contains(string(out), ns) {
		t.Errorf("/api/v1 lacks %s", ns)
	}
}

// TestDiscoveryGolden pins every document of the built-in API and the test CRDs.
func TestDiscoveryGolden(t *testing.T) {
	api := testAPI(t)
	d := NewDiscovery(api, DiscoveryOptions{ServerAddress: "10.0.0.1:6443"})
	tb := Install(api, InstallOptions{})
	var b strings.Builder
	for i := range tb.Routes {
		r := &tb.Routes[i]
		doc, ok := d.Document(r)
		if !ok {
			continue
		}
		out, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(r.Path + "\n" + string(out) + "\n\n")
		if agg, ok := d.Aggregated(r); ok {
			out, err := json.Marshal(agg)
			if err != nil {
				t.Fatal(err)
			}
			b.WriteString(r.Path + " (aggregated)\n" + string(out) + "\n\n")
		}
	}
	golden.Check(t, "discovery/documents.txt", b.String())
}

func TestDiscoveryWithoutCore(t *testing.T) {
	api, err := ApplyRuntimeConfig(Builtin(), map[string]string{"api/all": "false", "coordination.k8s.io/v1": "true"})
	if err != nil {
		t.Fatal(err)
	}
	d := NewDiscovery(api, DiscoveryOptions{})
	if d.APIVersions != nil || len(d.AggregatedCore.Items) != 0 {
		t.Errorf("core group disabled, but /api is %+v", d.APIVersions)
	}
	if len(d.GroupList.Groups) != 1 || d.GroupList.Groups[0].Name != "coordination.k8s.io" {
		t.Errorf("/apis = %+v", d.GroupList)
	}
	if _, ok := d.Document(&Route{Endpoint: EndpointAPIVersions}); ok {
		t.Errorf("/api served without the core group")
	}
	out, _ := json.Marshal(d.AggregatedGroups)
	if !strings.HasPrefix(string(out), `{"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.k8s.io/v2","metadata":{},"items":[{"metadata":{"name":"coordination.k8s.io"}`) {
		t.Errorf("aggregated /apis = %s", out)
	}
}

func TestDiscoveryCustomVerbs(t *testing.T) {
	d := NewDiscovery(testAPI(t), DiscoveryOptions{})
	l := d.ResourceLists[schema.GroupVersion{Group: "example.com", Version: "v1"}]
	var names []string
	for _, r := range l.APIResources {
		names = append(names, r.Name)
	}
	// kube's CRD discovery: each CRD, then its status, then its scale.
	if got := strings.Join(names, " "); got != "gadgets widgets widgets/status widgets/scale" {
		t.Errorf("resources %s", got)
	}
	if got := strings.Join(l.APIResources[1].Verbs, ","); got != "delete,deletecollection,get,list,patch,create,update,watch" {
		t.Errorf("custom resource verbs %s, want kube's CRD order", got)
	}
	if g := d.Groups["example.com"]; g.PreferredVersion.Version != "v1" || len(g.Versions) != 2 || g.Versions[1].Version != "v1beta1" {
		t.Errorf("example.com group %+v", g)
	}
}
