package aggregator

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset/fake"
	aggregatorinformers "k8s.io/kube-aggregator/pkg/client/informers/externalversions"
	"k8s.io/utils/ptr"

	"github.com/apictl/apictl/pkg/serve"
)

// recordingSetter keeps what the controller gives the server.
type recordingSetter chan *serve.Remote

func (r recordingSetter) SetRemote(remote *serve.Remote) error {
	r <- remote
	return nil
}

// wait returns the first remote part that satisfies ok.
func (r recordingSetter) wait(t *testing.T, what string, ok func(*serve.Remote) bool) *serve.Remote {
	t.Helper()
	deadline := time.After(15 * time.Second)
	for {
		select {
		case remote := <-r:
			if ok(remote) {
				return remote
			}
		case <-deadline:
			t.Fatalf("the server was not given %s within 15s", what)
			return nil
		}
	}
}

// extensionServer answers discovery and OpenAPI as sample-apiserver does.
func extensionServer(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/apis":
		w.Header().Set("Content-Type", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")
		w.Header().Set("ETag", `"1"`)
		_ = json.NewEncoder(w).Encode(apidiscoveryv2.APIGroupDiscoveryList{Items: []apidiscoveryv2.APIGroupDiscovery{{
			ObjectMeta: metav1.ObjectMeta{Name: "wardle.example.com"},
			Versions: []apidiscoveryv2.APIVersionDiscovery{{Version: "v1beta1", Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent,
				Resources: []apidiscoveryv2.APIResourceDiscovery{{Resource: "flunders", Scope: apidiscoveryv2.ScopeNamespace,
					Verbs: []string{"get", "list"}, Subresources: []apidiscoveryv2.APISubresourceDiscovery{{Subresource: "status"}}}}}},
		}}})
	case "/openapi/v2":
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"swagger":"2.0","info":{"title":"wardle"},"paths":{"/apis/wardle.example.com/v1beta1/flunders":{"get":{"responses":{"200":{"description":"OK"}}}},"/version/":{"get":{"responses":{"200":{"description":"OK"}}}}}}`))
	case "/openapi/v3":
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"paths":{"apis/wardle.example.com/v1beta1":{"serverRelativeURL":"/openapi/v3/apis/wardle.example.com/v1beta1?hash=AB"},"version":{"serverRelativeURL":"/openapi/v3/version?hash=CD"}}}`))
	default:
		http.NotFound(w, r)
	}
}

func apiService(name, group, version string, service bool, available bool, caBundle []byte) *apiregistrationv1.APIService {
	a := &apiregistrationv1.APIService{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       apiregistrationv1.APIServiceSpec{Group: group, Version: version, GroupPriorityMinimum: 1000, VersionPriority: 15, CABundle: caBundle},
	}
	if service {
		a.Spec.Service = &apiregistrationv1.ServiceReference{Namespace: "ns", Name: "api", Port: ptr.To[int32](443)}
	}
	if available {
		a.Status.Conditions = []apiregistrationv1.APIServiceCondition{{Type: apiregistrationv1.Available, Status: apiregistrationv1.ConditionTrue}}
	}
	return a
}

// TestControllerFetchesDiscoveryAndOpenAPI: a remote APIService gets a proxy at once and, once
// available, its discovery (Current) and OpenAPI fetched through it; local APIServices give their
// priorities; a deleted APIService leaves the server.
func TestControllerFetchesDiscoveryAndOpenAPI(t *testing.T) {
	f := newProxyFixture(t, http.HandlerFunc(extensionServer))
	client := fake.NewSimpleClientset(
		apiService("v1beta1.wardle.example.com", "wardle.example.com", "v1beta1", true, false, f.caBundle),
		apiService("v1.apps", "apps", "v1", false, true, nil),
	)
	factory := aggregatorinformers.NewSharedInformerFactory(client, 0)
	target := make(recordingSetter, 100)
	c, err := New(Config{APIServices: factory.Apiregistration().V1().APIServices(), Resolver: f.proxy.resolver,
		ProxyClientCertFile: f.certFile, ProxyClientKeyFile: f.keyFile, Target: target})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Run(ctx)
	}()
	defer func() {
		cancel()
		<-done
	}()

	first := target.wait(t, "the remote group version", func(r *serve.Remote) bool { return len(r.GroupVersions) == 1 })
	if p := first.LocalPriorities[schema.GroupVersion{Group: "apps", Version: "v1"}]; p != (serve.Priority{Group: 1000, Version: 15}) {
		t.Errorf("local priorities %v", first.LocalPriorities)
	}
	if first.GroupVersions[0].Discovery != nil && first.GroupVersions[0].Discovery.Freshness == apidiscoveryv2.DiscoveryFreshnessCurrent {
		t.Errorf("discovery fetched from an APIService that is not available: %+v", first.GroupVersions[0].Discovery)
	}

	// Available: the proxy lets requests through, and discovery and OpenAPI are fetched.
	_, err = client.ApiregistrationV1().APIServices().UpdateStatus(ctx,
		apiService("v1beta1.wardle.example.com", "wardle.example.com", "v1beta1", true, true, f.caBundle), metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := target.wait(t, "fetched discovery", func(r *serve.Remote) bool {
		return len(r.GroupVersions) == 1 && r.GroupVersions[0].Discovery != nil && r.GroupVersions[0].Discovery.Freshness == apidiscoveryv2.DiscoveryFreshnessCurrent
	})
	gv := got.GroupVersions[0]
	if d := gv.Discovery; len(d.Resources) != 1 || d.Resources[0].ResponseKind == nil || d.Resources[0].Subresources[0].ResponseKind == nil {
		t.Errorf("discovery %+v: want flunders with responseKinds filled in", d)
	}
	if string(gv.OpenAPIV2) == "" || !json.Valid(gv.OpenAPIV2) {
		t.Fatalf("OpenAPI v2 %q", gv.OpenAPIV2)
	}
	var v2 struct{ Paths map[string]any }
	_ = json.Unmarshal(gv.OpenAPIV2, &v2)
	if _, ok := v2.Paths["/apis/wardle.example.com/v1beta1/flunders"]; !ok || len(v2.Paths) != 1 {
		t.Errorf("OpenAPI v2 paths %v: want the group version's alone", v2.Paths)
	}
	if gv.OpenAPIV3URL != "/openapi/v3/apis/wardle.example.com/v1beta1?hash=AB" {
		t.Errorf("OpenAPI v3 URL %q", gv.OpenAPIV3URL)
	}

	if err := client.ApiregistrationV1().APIServices().Delete(ctx, "v1beta1.wardle.example.com", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	target.wait(t, "the deletion", func(r *serve.Remote) bool { return len(r.GroupVersions) == 0 })
}
