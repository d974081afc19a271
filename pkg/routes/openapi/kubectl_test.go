package openapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/apictl/apictl/internal/testtool"
	"github.com/apictl/apictl/pkg/routes"
)

// apiServer serves the discovery and OpenAPI documents of api on 127.0.0.1, as apictl serve will,
// and records the paths asked for.
func apiServer(t *testing.T, api *routes.API) (*httptest.Server, *requestLog) {
	t.Helper()
	table := routes.Install(api, routes.InstallOptions{})
	m, err := routes.NewMatcher(table)
	if err != nil {
		t.Fatal(err)
	}
	d := routes.NewDiscovery(api, routes.DiscoveryOptions{})
	v2, err := BuildV2(table, api, Options{Version: "v1.0.0-test"})
	if err != nil {
		t.Fatal(err)
	}
	v3, err := BuildV3(table, api, Options{Version: "v1.0.0-test"})
	if err != nil {
		t.Fatal(err)
	}
	v3JSON := map[string][]byte{}
	for k, doc := range v3 {
		if v3JSON[k], err = json.Marshal(doc); err != nil {
			t.Fatal(err)
		}
	}
	index := NewV3Index(v3JSON)
	log := &requestLog{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.add(r.URL.Path)
		match := m.Match(r.Method, r.URL.Path)
		if match.Route == nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		var body any
		switch match.Route.Endpoint {
		case routes.EndpointOpenAPIV2:
			body = v2
		case routes.EndpointOpenAPIV3:
			if match.Params.Subpath == "" && r.URL.Path == "/openapi/v3" {
				body = index
				break
			}
			doc, ok := v3JSON[match.Params.Subpath]
			if !ok {
				http.NotFound(w, r)
				return
			}
			_, _ = w.Write(doc)
			return
		default:
			doc, ok := d.Document(match.Route)
			if !ok {
				http.NotFound(w, r)
				return
			}
			body = doc
		}
		if err := json.NewEncoder(w).Encode(body); err != nil {
			t.Error(err)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, log
}

type requestLog struct {
	mu    sync.Mutex
	paths []string
}

func (l *requestLog) add(p string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.paths = append(l.paths, p)
}

func (l *requestLog) has(p string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Contains(l.paths, p)
}

// kubectl runs the installed kubectl against srv with an empty configuration. Without kubectl the
// test is skipped, or fails under CI_REQUIRE_TOOLS=1.
func kubectl(t *testing.T, srv *httptest.Server, args ...string) (string, error) {
	t.Helper()
	path := testtool.Tool(t, "kubectl")
	home := t.TempDir()
	kubeconfig := filepath.Join(home, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), path, append(args, "--server", srv.URL,
		"--cache-dir", filepath.Join(home, "cache"), "--kubeconfig", kubeconfig)...)
	cmd.Env = []string{"HOME=" + home, "PATH=/usr/bin:/bin"}
	cmd.Dir = home
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// TestKubectlExplain runs the real kubectl, if installed, against the discovery and OpenAPI v3
// documents: kubectl explain must find and describe built-in kinds and custom resources.
func TestKubectlExplain(t *testing.T) {
	srv, _ := apiServer(t, testAPI(t))
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"configmaps"}, []string{"KIND:       ConfigMap", "VERSION:    v1", "ConfigMap holds configuration data for pods to consume.", "binaryData\t<map[string]string>"}},
		{[]string{"cm.metadata.finalizers"}, []string{"FIELD: finalizers <[]string>", "Must be empty before the object is deleted"}},
		{[]string{"leases.spec.renewTime"}, []string{"GROUP:      coordination.k8s.io", "FIELD: renewTime <string>", "renewTime is a time when the current holder"}},
		{[]string{"events.involvedObject"}, []string{"FIELD: involvedObject <ObjectReference>"}},
		{[]string{"widgets.spec", "--api-version", "example.com/v1"}, []string{"KIND:       Widget", "parts\t<[]Object>", "size\t<string> -required-", "enum: small, large"}},
		{[]string{"gadgets", "--api-version", "example.com/v1"}, []string{"KIND:       Gadget", "spec\t<Object>"}},
		// As kubectl explains it against kube-apiserver v1.37.2.
		{[]string{"crd.spec.versions"}, []string{"GROUP:      apiextensions.k8s.io", "KIND:       CustomResourceDefinition",
			"FIELD: versions <[]CustomResourceDefinitionVersion>", "versions is the list of all API versions of the defined custom resource.",
			"CustomResourceDefinitionVersion describes a version for CRD.", "served\t<boolean> -required-"}},
	} {
		out, err := kubectl(t, srv, append([]string{"explain"}, tt.args...)...)
		if err != nil {
			t.Fatalf("kubectl explain %v: %v\n%s", tt.args, err, out)
		}
		for _, want := range tt.want {
			if !strings.Contains(out, want) {
				t.Errorf("kubectl explain %s lacks %q:\n%s", strings.Join(tt.args, " "), want, out)
			}
		}
	}
}

// TestKubectlValidateStrict: with the default --validate=strict, kubectl create -f asks
// /openapi/v3 whether the server validates fields (a PATCH operation of the kind with a
// fieldValidation parameter) and, finding that it does, never needs /openapi/v2.
func TestKubectlValidateStrict(t *testing.T) {
	srv, log := apiServer(t, testAPI(t))
	for _, manifest := range []string{
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: default}\ndata: {a: b}\n",
		"apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: default}\nspec: {size: small}\n",
	} {
		file := filepath.Join(t.TempDir(), "object.yaml")
		if err := os.WriteFile(file, []byte(manifest), 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := kubectl(t, srv, "create", "-f", file, "--dry-run=client", "--validate=strict")
		if err != nil || !strings.Contains(out, "created (dry run)") {
			t.Errorf("kubectl create --validate=strict: %v\n%s", err, out)
		}
	}
	if !log.has("/openapi/v3/api/v1") || !log.has("/openapi/v3/apis/example.com/v1") {
		t.Errorf("kubectl did not read the v3 documents: %v", log.paths)
	}
	if log.has("/openapi/v2") {
		t.Errorf("kubectl fell back to /openapi/v2: the v3 documents did not show fieldValidation")
	}
}
