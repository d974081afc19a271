package serve

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apictl/apictl/pkg/routes"
)

// localPriorities gives the local groups of api priorities in their discovery order, 20000 for the
// first and 100 less for each next, as Local APIServices would.
func localPriorities(api *routes.API) (map[schema.GroupVersion]Priority, []string) {
	out := map[schema.GroupVersion]Priority{}
	var names []string
	for i, g := range api.Groups() {
		if g.Name == routes.GroupCore {
			continue
		}
		names = append(names, g.Name)
		for j, v := range g.Versions {
			out[schema.GroupVersion{Group: g.Name, Version: v.Name}] = Priority{Group: int32(20000 - 100*i), Version: int32(15 - j)}
		}
	}
	return out, names
}

// TestRemoteDiscoveryAndProxy: remote group versions are proxied, local ones are not; /apis places a
// remote group by its priority among the local ones (kube-apiserver v1.37.2 put an APIService
// v1alpha1.zzz.example.com of groupPriorityMinimum 17000 right after rbac.authorization.k8s.io, also
// 17000, by APIService name), /apis/<group> lists it, and aggregated discovery lists a version not yet
// fetched as Stale without resources, as the reference did for an APIService whose service is missing.
func TestRemoteDiscoveryAndProxy(t *testing.T) {
	var s *Server
	ts := startTestServer(t, nil, fakeResources{}, func(srv *Server) { s = srv })
	prios, locals := localPriorities(s.API())
	if len(locals) < 2 {
		t.Fatalf("the built-in API has too few groups for this test: %v", locals)
	}
	second := prios[schema.GroupVersion{Group: locals[1], Version: "v1"}]
	var proxied []string
	proxy := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxied = append(proxied, r.URL.Path)
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("from the remote"))
	})
	wardle := apidiscoveryv2.APIVersionDiscovery{Version: "v1beta1", Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent,
		Resources: []apidiscoveryv2.APIResourceDiscovery{{Resource: "flunders", Scope: apidiscoveryv2.ScopeNamespace,
			ResponseKind: &metav1.GroupVersionKind{Group: "wardle.example.com", Version: "v1beta1", Kind: "Flunder"}, Verbs: []string{"get", "list"}}}}
	err := s.SetRemote(&Remote{
		LocalPriorities: prios,
		GroupVersions: []RemoteGroupVersion{
			// Same priority as the second local group, and a name after its APIService's: right after it.
			{Group: "zzz.example.com", Version: "v1alpha1", Priority: Priority{Group: second.Group, Version: 15}, Handler: proxy},
			{Group: "wardle.example.com", Version: "v1alpha1", Priority: Priority{Group: 100, Version: 10}, Handler: proxy},
			{Group: "wardle.example.com", Version: "v1beta1", Priority: Priority{Group: 100, Version: 20}, Handler: proxy, Discovery: &wardle},
		},
	})
	if err != nil {
		t.Fatal(err)
	}

	code, body, _ := do(t, http.DefaultClient, "GET", ts.insecureURL+"/apis", nil, nil)
	var list metav1.APIGroupList
	if err := json.Unmarshal([]byte(body), &list); code != 200 || err != nil {
		t.Fatalf("/apis: %d %v", code, err)
	}
	var names []string
	for _, g := range list.Groups {
		names = append(names, g.Name)
	}
	want := slices.Concat(locals[:2], []string{"zzz.example.com"}, locals[2:], []string{"wardle.example.com"})
	if !slices.Equal(names, want) {
		t.Errorf("/apis groups\n%v, want\n%v", names, want)
	}

	code, body, _ = do(t, http.DefaultClient, "GET", ts.insecureURL+"/apis/wardle.example.com", nil, nil)
	const wantGroup = `{"kind":"APIGroup","apiVersion":"v1","name":"wardle.example.com","versions":[{"groupVersion":"wardle.example.com/v1beta1","version":"v1beta1"},{"groupVersion":"wardle.example.com/v1alpha1","version":"v1alpha1"}],"preferredVersion":{"groupVersion":"wardle.example.com/v1beta1","version":"v1beta1"}}` + "\n"
	if code != 200 || body != wantGroup {
		t.Errorf("/apis/wardle.example.com: %d\n%s\nwant\n%s", code, body, wantGroup)
	}

	code, body, _ = do(t, http.DefaultClient, "GET", ts.insecureURL+"/apis", nil, map[string]string{"Accept": routes.MediaAggregatedDiscovery})
	var agg apidiscoveryv2.APIGroupDiscoveryList
	if err := json.Unmarshal([]byte(body), &agg); code != 200 || err != nil {
		t.Fatalf("aggregated /apis: %d %v", code, err)
	}
	byName := map[string]apidiscoveryv2.APIGroupDiscovery{}
	var aggNames []string
	for _, g := range agg.Items {
		byName[g.Name] = g
		aggNames = append(aggNames, g.Name)
	}
	if !slices.Equal(aggNames, want) {
		t.Errorf("aggregated /apis groups\n%v, want\n%v", aggNames, want)
	}
	zzz, _ := json.Marshal(byName["zzz.example.com"])
	if string(zzz) != `{"metadata":{"name":"zzz.example.com"},"versions":[{"version":"v1alpha1","freshness":"Stale"}]}` {
		t.Errorf("an unfetched remote version: %s", zzz)
	}
	if w := byName["wardle.example.com"]; len(w.Versions) != 2 || w.Versions[0].Version != "v1beta1" || len(w.Versions[0].Resources) != 1 ||
		w.Versions[1].Freshness != apidiscoveryv2.DiscoveryFreshnessStale {
		t.Errorf("wardle.example.com in aggregated discovery: %+v", w)
	}

	for _, p := range []string{"/apis/wardle.example.com/v1beta1", "/apis/wardle.example.com/v1alpha1/namespaces/x/flunders/y", "/apis/zzz.example.com/v1alpha1/"} {
		code, body, _ = do(t, http.DefaultClient, "GET", ts.insecureURL+p, nil, nil)
		if code != 200 || body != "from the remote" {
			t.Errorf("%s: %d %q, want the proxy's answer", p, code, body)
		}
	}
	// A version no APIService names, and the local API, are not proxied.
	for _, p := range []string{"/apis/wardle.example.com/v2/flunders", "/api/v1/namespaces/default/configmaps", "/apis/" + locals[0]} {
		before := len(proxied)
		do(t, http.DefaultClient, "GET", ts.insecureURL+p, nil, nil)
		if len(proxied) != before {
			t.Errorf("%s went to the proxy", p)
		}
	}

	// SetAPI keeps the remote part; SetRemote(nil) drops it.
	if err := s.SetAPI(s.API()); err != nil {
		t.Fatal(err)
	}
	if code, _, _ = do(t, http.DefaultClient, "GET", ts.insecureURL+"/apis/wardle.example.com/v1beta1", nil, nil); code != 200 {
		t.Errorf("after SetAPI the remote group answers %d", code)
	}
	if err := s.SetRemote(nil); err != nil {
		t.Fatal(err)
	}
	if code, body, _ = do(t, http.DefaultClient, "GET", ts.insecureURL+"/apis", nil, nil); strings.Contains(body, "wardle") {
		t.Errorf("after SetRemote(nil) /apis still lists the remote group: %d", code)
	}
}

// TestRemoteOpenAPI: a remote group version's OpenAPI v2 paths and definitions merge into
// /openapi/v2, its v3 index entry is listed with the remote server's URL, and the v3 document is
// proxied to it.
func TestRemoteOpenAPI(t *testing.T) {
	var s *Server
	ts := startTestServer(t, nil, fakeResources{}, func(srv *Server) { s = srv })
	proxy := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"openapi":"3.0.0","info":{"title":"remote"}}`))
	})
	v2 := `{"swagger":"2.0","info":{"title":"remote"},"paths":{"/apis/wardle.example.com/v1beta1/flunders":{"get":{"operationId":"listWardleFlunders","responses":{"200":{"description":"OK","schema":{"$ref":"#/definitions/com.example.wardle.v1beta1.FlunderList"}}}}}},` +
		`"definitions":{"com.example.wardle.v1beta1.FlunderList":{"type":"object"}}}`
	err := s.SetRemote(&Remote{GroupVersions: []RemoteGroupVersion{{Group: "wardle.example.com", Version: "v1beta1", Priority: Priority{Group: 100, Version: 15},
		Handler: proxy, OpenAPIV2: []byte(v2), OpenAPIV3URL: "/openapi/v3/apis/wardle.example.com/v1beta1?hash=ABC"}}})
	if err != nil {
		t.Fatal(err)
	}
	code, body, _ := do(t, http.DefaultClient, "GET", ts.insecureURL+"/openapi/v2", nil, map[string]string{"Accept": "application/json"})
	if code != 200 || !strings.Contains(body, `"/apis/wardle.example.com/v1beta1/flunders"`) || !strings.Contains(body, `"com.example.wardle.v1beta1.FlunderList"`) ||
		!strings.Contains(body, `"/api/v1/namespaces/{namespace}/configmaps"`) {
		t.Errorf("/openapi/v2 does not hold both the local and the remote paths: %d %.300s", code, body)
	}
	code, body, _ = do(t, http.DefaultClient, "GET", ts.insecureURL+"/openapi/v3", nil, nil)
	if code != 200 || !strings.Contains(body, `"apis/wardle.example.com/v1beta1":{"serverRelativeURL":"/openapi/v3/apis/wardle.example.com/v1beta1?hash=ABC"}`) ||
		!strings.Contains(body, `"api/v1":`) {
		t.Errorf("/openapi/v3 index: %d %.300s", code, body)
	}
	code, body, _ = do(t, http.DefaultClient, "GET", ts.insecureURL+"/openapi/v3/apis/wardle.example.com/v1beta1?hash=ABC", nil, nil)
	if code != 200 || !strings.Contains(body, `"title":"remote"`) {
		t.Errorf("the remote v3 document: %d %s", code, body)
	}
}

// TestRemoteVersionOfALocalGroup: a remote version of a group served locally joins the group's
// versions by versionPriority, in legacy and aggregated discovery, and only it is proxied.
func TestRemoteVersionOfALocalGroup(t *testing.T) {
	api := routes.Builtin()
	prios, locals := localPriorities(api)
	group := locals[0]
	d := routes.NewDiscovery(api, routes.DiscoveryOptions{})
	remote := RemoteGroupVersion{Group: group, Version: "v2alpha1", Priority: Priority{Group: 100, Version: 1}, Handler: http.NotFoundHandler()}
	rs, err := mergeRemote(d, &Remote{LocalPriorities: prios, GroupVersions: []RemoteGroupVersion{remote}})
	if err != nil {
		t.Fatal(err)
	}
	if rs.handler("/apis/"+group+"/v2alpha1/things") == nil || rs.handler("/apis/"+group+"/v1/things") != nil {
		t.Error("want the remote version proxied and the local one not")
	}
	want := `{"kind":"APIGroup","apiVersion":"v1","name":"` + group + `","versions":[{"groupVersion":"` + group + `/v1","version":"v1"},` +
		`{"groupVersion":"` + group + `/v2alpha1","version":"v2alpha1"}],"preferredVersion":{"groupVersion":"` + group + `/v1","version":"v1"}}`
	if got := string(rs.groupDocs[group]); got != want {
		t.Errorf("/apis/%s\n%s\nwant\n%s", group, got, want)
	}
	if g := d.GroupList.Groups[0]; g.Name != group || len(g.Versions) != 2 || g.Versions[1].Version != "v2alpha1" {
		t.Errorf("/apis lists %+v first", g)
	}
	if g := d.AggregatedGroups.Items[0]; g.Name != group || len(g.Versions) != 2 || len(g.Versions[0].Resources) == 0 ||
		g.Versions[1].Freshness != apidiscoveryv2.DiscoveryFreshnessStale {
		t.Errorf("aggregated discovery lists %+v first", g)
	}
}
