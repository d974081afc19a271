package app

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/apictl/apictl/internal/golden"
	"github.com/apictl/apictl/pkg/routes"
)

// TestRoutesFormats prints the coordination.k8s.io routes and the widgets CRD in every format;
// the OpenAPI formats only the PATCH operations, to keep the golden files readable.
func TestRoutesFormats(t *testing.T) {
	crds := filepath.Join(testdataDir, "routes", "crds")
	for _, tt := range []struct {
		name     string
		terminal bool
		args     []string
	}{
		{"table.txt", true, []string{"--group", "coordination.k8s.io"}},
		{"pipe.txt", false, []string{"--group", "coordination.k8s.io"}},
		{"wide.txt", true, []string{"--group", "coordination.k8s.io", "-o", "wide"}},
		{"wide-pipe.txt", false, []string{"--group", "coordination.k8s.io", "-o", "wide"}},
		{"markdown.md", false, []string{"--group", "coordination.k8s.io", "-o", "markdown"}},
		{"json.json", false, []string{"--group", "coordination.k8s.io", "--verb", "get", "-o", "json"}},
		{"yaml.yaml", false, []string{"--group", "coordination.k8s.io", "--verb", "get", "-o", "yaml"}},
		{"openapi-v2.json", false, []string{"--group", "coordination.k8s.io", "--verb", "patch", "-o", "openapi-v2"}},
		{"openapi-v3.json", false, []string{"--group", "coordination.k8s.io", "--verb", "patch", "-o", "openapi-v3"}},
		{"crd.txt", true, []string{"--api-config", crds, "--group", "example.com"}},
		{"crd-openapi-v3.json", false, []string{"--api-config", crds, "--resource", "widgets/status", "--verb", "patch", "-o", "openapi-v3"}},
		{"non-resource.txt", true, []string{"--non-resource", "--group", "coordination.k8s.io", "--verb", "get"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out, stderr := run(t, tt.terminal, append([]string{"routes"}, tt.args...)...)
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			golden.Check(t, "routes/"+tt.name, out)
		})
	}
}

// TestRoutesMustShow checks issue 3's routes in the default table and with the widgets CRD.
func TestRoutesMustShow(t *testing.T) {
	_, out, _ := run(t, false, "routes")
	for _, want := range []string{
		"GET\t/api/v1/namespaces/{namespace}/configmaps\tlist\tlistCoreV1NamespacedConfigMap\n",
		"DELETE\t/api/v1/namespaces/{namespace}/configmaps\tdeletecollection\tdeleteCoreV1CollectionNamespacedConfigMap\n",
		"GET\t/api/v1/watch/configmaps\twatch\twatchCoreV1ConfigMapListForAllNamespaces\n",
		"PUT\t/api/v1/namespaces/{name}/finalize\tupdate\treplaceCoreV1NamespaceFinalize\n",
		"PATCH\t/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}\tpatch\tpatchCoordinationV1NamespacedLease\n",
		"GET\t/apis/rbac.authorization.k8s.io/v1/clusterroles/{name}\tget\treadRbacAuthorizationV1ClusterRole\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("apictl routes lacks %q", want)
		}
	}
	if strings.Contains(out, "/healthz") {
		t.Errorf("non-resource routes printed without --non-resource")
	}

	crds := filepath.Join(testdataDir, "routes", "crds")
	_, out, _ = run(t, false, "routes", "--api-config", crds)
	const status = "PUT\t/apis/example.com/v1/namespaces/{namespace}/widgets/{name}/status\tupdate\treplaceExampleComV1NamespacedWidgetStatus\n"
	if !strings.Contains(out, status) {
		t.Errorf("the widgets CRD does not add %q", status)
	}
	code, out, stderr := run(t, false, "routes", "--api-config", crds, "--runtime-config", "example.com/v1=false")
	if code != ExitOK || strings.Contains(out, "example.com") || !strings.Contains(out, "configmaps") {
		t.Errorf("--runtime-config example.com/v1=false: exit %d, stderr %s, widgets still listed: %v", code, stderr, strings.Contains(out, "example.com"))
	}
}

func TestRoutesErrors(t *testing.T) {
	malformed := filepath.Join(testdataDir, "routes", "malformed.yaml")
	tests := []struct {
		name string
		args []string
		code int
		// errParts must all appear in stderr.
		errParts []string
	}{
		{"malformed crd", []string{"routes", "--api-config", malformed}, ExitFailure,
			[]string{"error: " + malformed + ": document 2 (line 13): spec.names.kind: Required value"}},
		{"missing manifest", []string{"routes", "--api-config", "nope.yaml"}, ExitFailure,
			[]string{"error: nope.yaml: does not exist: give a CRD manifest file or a directory of them"}},
		{"runtime config", []string{"routes", "--runtime-config", "apps/v1=false,v1=maybe"}, ExitFailure,
			[]string{"error: --runtime-config apps/v1=false has unknown api groups apps", "invalid value of /v1: maybe", "2 error(s)"}},
		{"bad format", []string{"routes", "-o", "xml"}, ExitUsage, []string{`unknown output format "xml"`}},
		{"unknown group", []string{"routes", "--group", "apps"}, ExitUsage, []string{`group "apps" is not served: use one of core, apiregistration.k8s.io, events.k8s.io, authentication.k8s.io, authorization.k8s.io, certificates.k8s.io, networking.k8s.io, rbac.authorization.k8s.io, admissionregistration.k8s.io, apiextensions.k8s.io, coordination.k8s.io, discovery.k8s.io`}},
		{"unknown verb", []string{"routes", "--verb", "bind"}, ExitUsage, []string{`verb "bind" is not a discovery verb`}},
		{"singular resource", []string{"routes", "--resource", "configmap"}, ExitUsage,
			[]string{`error: resource "configmap" is not served: did you mean "configmaps"?` + "\nRun 'apictl routes --help' for usage.\n"}},
		{"kind as resource", []string{"routes", "--resource", "ConfigMap"}, ExitUsage, []string{`did you mean "configmaps"?`}},
		{"short name as resource", []string{"routes", "--resource", "cm"}, ExitUsage, []string{`did you mean "configmaps"?`}},
		{"api-config with server", []string{"routes", "--server", "http://127.0.0.1:1", "--api-config", malformed}, ExitUsage,
			[]string{"--api-config cannot be used with --server"}},
		{"unreachable server", []string{"routes", "--server", "http://127.0.0.1:1"}, ExitFailure,
			[]string{"error: reading the discovery of http://127.0.0.1:1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chdirTemp(t)
			code, out, stderr := run(t, false, tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tt.code, stderr)
			}
			if out != "" {
				t.Errorf("printed a table despite the error:\n%s", out)
			}
			for _, part := range tt.errParts {
				if !strings.Contains(stderr, part) {
					t.Errorf("stderr lacks %q:\n%s", part, stderr)
				}
			}
		})
	}
}

// discoveryServer serves the discovery documents of api, like any Kubernetes API server, and
// records the Authorization headers it gets.
func discoveryServer(t *testing.T, api *routes.API, tls bool) (*httptest.Server, func() []string) {
	t.Helper()
	d := routes.NewDiscovery(api, routes.DiscoveryOptions{})
	m, err := routes.NewMatcher(routes.Install(api, routes.InstallOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var auth []string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		match := m.Match(r.Method, r.URL.Path)
		if match.Route == nil {
			http.NotFound(w, r)
			return
		}
		doc, ok := d.Document(match.Route)
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(doc)
	}))
	if tls {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), auth...)
	}
}

// TestRoutesFromServer: the table computed from a live server's discovery is the table computed
// from the same configuration locally.
func TestRoutesFromServer(t *testing.T) {
	crds := filepath.Join(testdataDir, "routes", "crds")
	api, err := routes.LoadAPI([]string{crds}, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv, auth := discoveryServer(t, api, false)
	_, local, _ := run(t, false, "routes", "--api-config", crds, "-o", "wide", "--non-resource")
	code, live, stderr := run(t, false, "routes", "--server", srv.URL, "--token", "secret", "-o", "wide", "--non-resource")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if live != local {
		t.Errorf("table from --server differs from the local one:\n%s\nwant:\n%s", live, local)
	}
	for _, a := range auth() {
		if a != "Bearer secret" {
			t.Errorf("request with Authorization %q, want the --token", a)
		}
	}
}

// TestRoutesFromTLSServer reaches a TLS server through a kubeconfig (whose token client-go sends
// only over TLS), --certificate-authority and --insecure-skip-tls-verify.
func TestRoutesFromTLSServer(t *testing.T) {
	srv, auth := discoveryServer(t, routes.Builtin(), true)
	dir := chdirTemp(t)
	ca := filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	content := "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: " + srv.URL + "}\n" +
		"users:\n- name: u\n  user: {token: from-kubeconfig}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n"
	if err := os.WriteFile(kubeconfig, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := run(t, false, "routes", "--kubeconfig", kubeconfig, "--certificate-authority", ca, "--group", "rbac.authorization.k8s.io")
	if code != ExitOK || !strings.Contains(out, "readRbacAuthorizationV1ClusterRole") {
		t.Errorf("--kubeconfig: exit %d, stderr %s", code, stderr)
	}
	if got := auth(); len(got) == 0 || got[len(got)-1] != "Bearer from-kubeconfig" {
		t.Errorf("the kubeconfig's token was not sent: %q", got)
	}
	// --runtime-config applies to what the server serves.
	code, _, stderr = run(t, false, "routes", "--kubeconfig", kubeconfig, "--certificate-authority", ca, "--group", "coordination.k8s.io", "--runtime-config", "coordination.k8s.io/v1=false")
	if code != ExitUsage || !strings.Contains(stderr, `group "coordination.k8s.io" is not served`) {
		t.Errorf("runtime-config not applied to the live API: exit %d, stderr %s", code, stderr)
	}
	if code, _, stderr = run(t, false, "routes", "--server", srv.URL, "--insecure-skip-tls-verify"); code != ExitOK {
		t.Errorf("--insecure-skip-tls-verify: exit %d, stderr %s", code, stderr)
	}
	code, _, stderr = run(t, false, "routes", "--server", srv.URL)
	if code != ExitFailure || !strings.Contains(stderr, "certificate") {
		t.Errorf("an unverified server was accepted: exit %d, stderr %s", code, stderr)
	}
}

func TestRoutesOptions(t *testing.T) {
	var got *routesOptions
	cmd := newRoutesCmdWithRun(Streams{Out: io.Discard, ErrOut: io.Discard}, func(_ context.Context, o *routesOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--group", "core", "--version", "v1", "--resource", "namespaces/status", "--verb", "patch", "--non-resource",
		"--profiling=false", "--runtime-config", "v1=true", "--runtime-config", "api/legacy", "--api-config", "a.yaml,b.yaml",
		"--server", "https://h:6443", "--insecure-skip-tls-verify", "-o", "wide"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	want := routes.Filter{Group: "core", Version: "v1", Resource: "namespaces/status", Verb: "patch", NonResource: true}
	if got.filter != want || got.profiling || got.format != "wide" || !got.live.insecure || got.live.server != "https://h:6443" {
		t.Errorf("options %+v", got)
	}
	if len(got.enablement.RuntimeConfig) != 2 || len(got.enablement.APIConfig) != 2 {
		t.Errorf("enablement %+v", got.enablement)
	}
}

func TestRoutesCompletion(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"__complete", "routes", "--group", ""}, "core\napiregistration.k8s.io\nevents.k8s.io\nauthentication.k8s.io\nauthorization.k8s.io\ncertificates.k8s.io\nnetworking.k8s.io\nrbac.authorization.k8s.io\nadmissionregistration.k8s.io\napiextensions.k8s.io\ncoordination.k8s.io\ndiscovery.k8s.io\n"},
		{[]string{"__complete", "routes", "-o", ""}, "table\nwide\njson\nyaml\nmarkdown\nopenapi-v2\nopenapi-v3\n"},
		{[]string{"__complete", "routes", "--resource", ""}, "configmaps\nendpoints\nevents\nnamespaces\nnamespaces/finalize\nnamespaces/status\npodtemplates\nresourcequotas\nresourcequotas/status\nsecrets\n"},
	} {
		code, out, _ := run(t, false, tt.args...)
		if code != ExitOK || !strings.HasPrefix(out, tt.want) {
			t.Errorf("%v: exit %d, completions %q, want prefix %q", tt.args, code, out, tt.want)
		}
	}
}

// TestRoutesFromServerWithAFailingGroup: a group whose discovery fails is left out with a warning, as
// kubectl does, and the rest of the table is printed.
func TestRoutesFromServerWithAFailingGroup(t *testing.T) {
	good, _ := discoveryServer(t, routes.Builtin(), false)
	target, err := url.Parse(good.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/apis/coordination.k8s.io/v1" {
			http.Error(w, "etcd is down", http.StatusServiceUnavailable)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	code, out, stderr := run(t, false, "routes", "--server", srv.URL)
	if code != ExitOK || !strings.Contains(out, "readCoreV1Namespace") || strings.Contains(out, "coordination.k8s.io") {
		t.Errorf("exit %d; the table must keep the core group and leave coordination out:\n%s\nstderr: %s", code, out, stderr)
	}
	if !strings.Contains(stderr, "warning: unable to retrieve the complete list of server APIs: coordination.k8s.io/v1: GET /apis/coordination.k8s.io/v1: 503 Service Unavailable: etcd is down") {
		t.Errorf("stderr lacks the warning naming the group:\n%s", stderr)
	}
}
