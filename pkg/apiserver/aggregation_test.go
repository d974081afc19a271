package apiserver_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"k8s.io/kube-aggregator/pkg/apis/apiregistration/v1/helper"
	aggregatorclient "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"

	"github.com/apictl/apictl/internal/servertest"
	"github.com/apictl/apictl/pkg/certs"
	"github.com/apictl/apictl/pkg/routes"
)

// wardleServer is an extension API server for wardle.example.com/v1beta1 that, like one built on
// k8s.io/apiserver, accepts only clients with a certificate of the front-proxy CA and takes the
// user from the X-Remote-* headers.
type wardleServer struct {
	*httptest.Server
	mu    sync.Mutex
	users []string // "<X-Remote-User> <X-Remote-Group,...>" of each flunders request
}

func startWardle(t *testing.T, frontProxyCA string) *wardleServer {
	t.Helper()
	caPEM, err := os.ReadFile(frontProxyCA)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	w := &wardleServer{}
	resources := []metav1.APIResource{{Name: "flunders", SingularName: "flunder", Namespaced: true, Kind: "Flunder", Verbs: []string{"get", "list", "watch"}}}
	w.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/apis" && strings.Contains(r.Header.Get("Accept"), "as=APIGroupDiscoveryList"):
			rw.Header().Set("Content-Type", routes.MediaAggregatedDiscovery)
			_ = json.NewEncoder(rw).Encode(apidiscoveryv2.APIGroupDiscoveryList{Items: []apidiscoveryv2.APIGroupDiscovery{{
				ObjectMeta: metav1.ObjectMeta{Name: "wardle.example.com"},
				Versions: []apidiscoveryv2.APIVersionDiscovery{{Version: "v1beta1", Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent,
					Resources: []apidiscoveryv2.APIResourceDiscovery{{Resource: "flunders", SingularResource: "flunder", Scope: apidiscoveryv2.ScopeNamespace,
						ResponseKind: &metav1.GroupVersionKind{Group: "wardle.example.com", Version: "v1beta1", Kind: "Flunder"}, Verbs: resources[0].Verbs}}}},
			}}})
		case r.URL.Path == "/apis/wardle.example.com/v1beta1":
			_ = json.NewEncoder(rw).Encode(metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
				GroupVersion: "wardle.example.com/v1beta1", APIResources: resources})
		case r.URL.Path == "/openapi/v3":
			_, _ = rw.Write([]byte(`{"paths":{"apis/wardle.example.com/v1beta1":{"serverRelativeURL":"/openapi/v3/apis/wardle.example.com/v1beta1?hash=W1"}}}`))
		case strings.HasSuffix(r.URL.Path, "/flunders"):
			w.mu.Lock()
			w.users = append(w.users, r.Header.Get("X-Remote-User")+" "+strings.Join(r.Header.Values("X-Remote-Group"), ","))
			w.mu.Unlock()
			_, _ = rw.Write([]byte(`{"kind":"FlunderList","apiVersion":"wardle.example.com/v1beta1","metadata":{},"items":[]}`))
		default:
			rw.WriteHeader(http.StatusNotFound)
			_, _ = rw.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`))
		}
	}))
	w.TLS = &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}
	w.StartTLS()
	t.Cleanup(w.Close)
	return w
}

// TestAggregation registers an extension server as kube users do on one machine (a Service of type
// ExternalName: localhost, and an APIService with insecureSkipTLSVerify) and checks that, once the
// APIService is Available, apictl proxies its group version with the front-proxy certificate and the
// user's identity, lists it in discovery (legacy and aggregated, with the resources fetched from the
// server) and in the OpenAPI v3 index.
func TestAggregation(t *testing.T) {
	s := servertest.Start(t)
	ctx := context.Background()
	wardle := startWardle(t, certs.CertPath(s.CertDir, certs.NameFrontProxyCA))
	_, portText, _ := net.SplitHostPort(wardle.Listener.Addr().String())
	port, _ := strconv.Atoi(portText)

	kube := kubernetes.NewForConfigOrDie(s.AdminConfig)
	_, err := kube.CoreV1().Services("default").Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "wardle"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "localhost",
			Ports: []corev1.ServicePort{{Name: "https", Port: int32(port)}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	apiServices := aggregatorclient.NewForConfigOrDie(s.AdminConfig).ApiregistrationV1().APIServices()
	_, err = apiServices.Create(ctx, &apiregistrationv1.APIService{
		ObjectMeta: metav1.ObjectMeta{Name: "v1beta1.wardle.example.com"},
		Spec: apiregistrationv1.APIServiceSpec{Group: "wardle.example.com", Version: "v1beta1", InsecureSkipTLSVerify: true,
			GroupPriorityMinimum: 1000, VersionPriority: 15,
			Service: &apiregistrationv1.ServiceReference{Namespace: "default", Name: "wardle", Port: ptr(int32(port))}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	aggregationEventually(t, "the APIService is Available", func() (bool, string) {
		a, err := apiServices.Get(ctx, "v1beta1.wardle.example.com", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return helper.IsAPIServiceConditionTrue(a, apiregistrationv1.Available), a.Status.String()
	})

	// The proxy: the admin's list reaches the extension server as the admin.
	aggregationEventually(t, "a list through the proxy", func() (bool, string) {
		code, body := adminGet(t, s.AdminConfig, "/apis/wardle.example.com/v1beta1/namespaces/default/flunders", "")
		return code == 200 && strings.Contains(body, "FlunderList"), strconv.Itoa(code) + " " + body
	})
	wardle.mu.Lock()
	users := strings.Join(wardle.users, ";")
	wardle.mu.Unlock()
	if !strings.Contains(users, "system:masters") {
		t.Errorf("the extension server saw the users %q, want the admin in system:masters", users)
	}

	// Discovery, legacy and aggregated, and the OpenAPI v3 index.
	if code, body := adminGet(t, s.AdminConfig, "/apis/wardle.example.com", ""); code != 200 || !strings.Contains(body, `"preferredVersion":{"groupVersion":"wardle.example.com/v1beta1"`) {
		t.Errorf("/apis/wardle.example.com: %d %s", code, body)
	}
	if code, body := adminGet(t, s.AdminConfig, "/apis", ""); code != 200 || !strings.Contains(body, `"name":"wardle.example.com"`) {
		t.Errorf("/apis: %d %s", code, body)
	}
	aggregationEventually(t, "flunders in aggregated discovery", func() (bool, string) {
		_, body := adminGet(t, s.AdminConfig, "/apis", routes.MediaAggregatedDiscovery)
		var list apidiscoveryv2.APIGroupDiscoveryList
		if err := json.Unmarshal([]byte(body), &list); err != nil {
			return false, err.Error()
		}
		for _, g := range list.Items {
			if g.Name == "wardle.example.com" {
				ok := len(g.Versions) == 1 && g.Versions[0].Freshness == apidiscoveryv2.DiscoveryFreshnessCurrent &&
					len(g.Versions[0].Resources) == 1 && g.Versions[0].Resources[0].Resource == "flunders"
				b, _ := json.Marshal(g)
				return ok, string(b)
			}
		}
		return false, "no wardle.example.com"
	})
	_, resources, err := kube.Discovery().ServerGroupsAndResources()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, l := range resources {
		if l.GroupVersion == "wardle.example.com/v1beta1" && len(l.APIResources) == 1 && l.APIResources[0].Name == "flunders" {
			found = true
		}
	}
	if !found {
		t.Error("client-go's discovery does not list wardle.example.com/v1beta1 flunders")
	}
	// `apictl routes --kubeconfig` reads legacy discovery, /apis/<group>/<version> of a remote group
	// version proxied, and builds its table from it.
	var groupList metav1.APIGroupList
	var wardleList metav1.APIResourceList
	_, apis := adminGet(t, s.AdminConfig, "/apis", "")
	_, wardleDoc := adminGet(t, s.AdminConfig, "/apis/wardle.example.com/v1beta1", "")
	if err := errors.Join(json.Unmarshal([]byte(apis), &groupList), json.Unmarshal([]byte(wardleDoc), &wardleList)); err != nil {
		t.Fatal(err)
	}
	var groupPtrs []*metav1.APIGroup
	for i := range groupList.Groups {
		groupPtrs = append(groupPtrs, &groupList.Groups[i])
	}
	live, err := routes.FromDiscovery(groupPtrs, []*metav1.APIResourceList{&wardleList})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := live.Resource("wardle.example.com", "v1beta1", "flunders"); !ok {
		t.Errorf("the routes built from discovery lack flunders: %s", wardleDoc)
	}
	aggregationEventually(t, "the OpenAPI v3 index entry", func() (bool, string) {
		_, body := adminGet(t, s.AdminConfig, "/openapi/v3", "")
		return strings.Contains(body, `"apis/wardle.example.com/v1beta1":{"serverRelativeURL":"/openapi/v3/apis/wardle.example.com/v1beta1?hash=W1"}`), body
	})

	// The APIService gone, the group is gone.
	if err := apiServices.Delete(ctx, "v1beta1.wardle.example.com", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	aggregationEventually(t, "the group to leave", func() (bool, string) {
		code, body := adminGet(t, s.AdminConfig, "/apis/wardle.example.com/v1beta1/namespaces/default/flunders", "")
		_, apis := adminGet(t, s.AdminConfig, "/apis", "")
		return code == 404 && !strings.Contains(apis, "wardle"), strconv.Itoa(code) + " " + body
	})
}

// adminGet sends a GET with the admin's credentials and returns the status code and body.
func adminGet(t *testing.T, cfg *rest.Config, path, accept string) (int, string) {
	t.Helper()
	c, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodGet, cfg.Host+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// aggregationEventually polls cond for up to 30 seconds.
func aggregationEventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ok, last := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 30s; last: %s", what, last)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
