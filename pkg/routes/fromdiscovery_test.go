package routes

import (
	"bytes"
	"cmp"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"

	"github.com/apictl/apictl/internal/testtool"
)

// discoveryServer serves the discovery documents of api on 127.0.0.1, legacy only or also
// aggregated, the way kube-apiserver answers them.
func discoveryServer(t *testing.T, api *API, aggregated bool) *httptest.Server {
	t.Helper()
	d := NewDiscovery(api, DiscoveryOptions{ServerAddress: "127.0.0.1:6443"})
	m, err := NewMatcher(Install(api, InstallOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		match := m.Match(r.Method, r.URL.Path)
		if match.Route == nil {
			http.NotFound(w, r)
			return
		}
		var doc any
		contentType := MediaJSON
		if agg, ok := d.Aggregated(match.Route); ok && aggregated && strings.Contains(r.Header.Get("Accept"), "as=APIGroupDiscoveryList") {
			doc, contentType = agg, MediaAggregatedDiscovery
		} else if legacy, ok := d.Document(match.Route); ok {
			doc = legacy
		} else {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", contentType)
		if err := json.NewEncoder(w).Encode(doc); err != nil {
			t.Error(err)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestDiscoveryRoundTrip: client-go reads the discovery this package builds, FromDiscovery turns it
// back into a model, and that model installs the same route table, for the built-in API and CRDs,
// through legacy and aggregated discovery.
func TestDiscoveryRoundTrip(t *testing.T) {
	for _, tt := range []struct {
		name       string
		api        *API
		aggregated bool
	}{
		{"builtin legacy", Builtin(), false},
		{"builtin aggregated", Builtin(), true},
		{"crds legacy", testAPI(t), false},
		{"crds aggregated", testAPI(t), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := discoveryServer(t, tt.api, tt.aggregated)
			client, err := discovery.NewDiscoveryClientForConfig(&rest.Config{Host: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			groups, lists, err := client.ServerGroupsAndResourcesWithContext(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			live, err := FromDiscovery(groups, lists)
			if err != nil {
				t.Fatal(err)
			}
			want := Install(tt.api, InstallOptions{Profiling: true})
			got := Install(live, InstallOptions{Profiling: true})
			if len(got.Routes) != len(want.Routes) {
				t.Fatalf("%d routes from discovery, %d from the model", len(got.Routes), len(want.Routes))
			}
			for i := range want.Routes {
				if !reflect.DeepEqual(got.Routes[i], want.Routes[i]) {
					t.Errorf("route %d:\n got %+v\nwant %+v", i, got.Routes[i], want.Routes[i])
				}
			}
			// What discovery carries comes back intact.
			for _, gv := range tt.api.GroupVersions() {
				if !tt.aggregated && !reflect.DeepEqual(NewDiscovery(live, DiscoveryOptions{}).ResourceLists[gv], NewDiscovery(tt.api, DiscoveryOptions{}).ResourceLists[gv]) {
					t.Errorf("%s: discovery differs after the round trip", gv)
				}
			}
		})
	}
}

func TestFromDiscoveryConnectSubresources(t *testing.T) {
	api, err := FromDiscovery(nil, nil)
	if err != nil || len(api.Groups()) != 0 {
		t.Fatalf("empty discovery: %v %v", api, err)
	}
	srv := discoveryServer(t, appsAPI(t), false)
	client, err := discovery.NewDiscoveryClientForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	groups, lists, err := client.ServerGroupsAndResources()
	if err != nil {
		t.Fatal(err)
	}
	live, err := FromDiscovery(groups, lists)
	if err != nil {
		t.Fatal(err)
	}
	tb := Install(live, InstallOptions{})
	if r := findRoute(t, tb, "PUT", "/api/v1/namespaces/{namespace}/services/{name}/proxy/{path:*}"); r.OperationID != "connectCoreV1PutNamespacedServiceProxyWithPath" {
		t.Errorf("service proxy: %s", r.OperationID)
	}
	if r := findRoute(t, tb, "POST", "/api/v1/namespaces/{namespace}/pods/{name}/exec"); r.Action != ActionConnect {
		t.Errorf("pods/exec: %s", r.Action)
	}
}

// TestKubectlAPIResources runs the real kubectl, if installed, against the discovery of the
// built-in API: its api-resources listing must be what a kube-apiserver with these resources gives.
func TestKubectlAPIResources(t *testing.T) {
	kubectl := testtool.Tool(t, "kubectl")
	srv := discoveryServer(t, Builtin(), true)
	home := t.TempDir()
	kubeconfig := filepath.Join(home, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), kubectl, "api-resources", "-o", "wide", "--server", srv.URL,
		"--cache-dir", filepath.Join(home, "cache"), "--kubeconfig", kubeconfig)
	cmd.Env = []string{"HOME=" + home, "PATH=/usr/bin:/bin"}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kubectl api-resources: %v: %s", err, stderr.String())
	}
	// kubectl api-resources -o wide of a kube-apiserver, for these resources.
	want := map[string]string{
		"configmaps": "cm v1 true ConfigMap create,delete,deletecollection,get,list,patch,update,watch",
		"events":     "ev v1 true Event create,delete,deletecollection,get,list,patch,update,watch",
		// The second "events", of events.k8s.io, is keyed by name and group.
		"events.events.k8s.io":        "ev events.k8s.io/v1 true Event create,delete,deletecollection,get,list,patch,update,watch",
		"namespaces":                  "ns v1 false Namespace create,delete,get,list,patch,update,watch",
		"podtemplates":                "- v1 true PodTemplate create,delete,deletecollection,get,list,patch,update,watch",
		"secrets":                     "- v1 true Secret create,delete,deletecollection,get,list,patch,update,watch",
		"serviceaccounts":             "sa v1 true ServiceAccount create,delete,deletecollection,get,list,patch,update,watch",
		"services":                    "svc v1 true Service create,delete,deletecollection,get,list,patch,update,watch",
		"endpoints":                   "ep v1 true Endpoints create,delete,deletecollection,get,list,patch,update,watch",
		"endpointslices":              "- discovery.k8s.io/v1 true EndpointSlice create,delete,deletecollection,get,list,patch,update,watch",
		"leases":                      "- coordination.k8s.io/v1 true Lease create,delete,deletecollection,get,list,patch,update,watch",
		"clusterrolebindings":         "- rbac.authorization.k8s.io/v1 false ClusterRoleBinding create,delete,deletecollection,get,list,patch,update,watch",
		"clusterroles":                "- rbac.authorization.k8s.io/v1 false ClusterRole create,delete,deletecollection,get,list,patch,update,watch",
		"rolebindings":                "- rbac.authorization.k8s.io/v1 true RoleBinding create,delete,deletecollection,get,list,patch,update,watch",
		"roles":                       "- rbac.authorization.k8s.io/v1 true Role create,delete,deletecollection,get,list,patch,update,watch",
		"selfsubjectreviews":          "- authentication.k8s.io/v1 false SelfSubjectReview create",
		"tokenreviews":                "- authentication.k8s.io/v1 false TokenReview create",
		"localsubjectaccessreviews":   "- authorization.k8s.io/v1 true LocalSubjectAccessReview create",
		"selfsubjectaccessreviews":    "- authorization.k8s.io/v1 false SelfSubjectAccessReview create",
		"selfsubjectrulesreviews":     "- authorization.k8s.io/v1 false SelfSubjectRulesReview create",
		"subjectaccessreviews":        "- authorization.k8s.io/v1 false SubjectAccessReview create",
		"customresourcedefinitions":   "crd,crds apiextensions.k8s.io/v1 false CustomResourceDefinition create,delete,deletecollection,get,list,patch,update,watch",
		"storageversionmigrations":    "- storagemigration.k8s.io/v1 false StorageVersionMigration create,delete,deletecollection,get,list,patch,update,watch",
		"ipaddresses":                 "ip networking.k8s.io/v1 false IPAddress create,delete,deletecollection,get,list,patch,update,watch",
		"servicecidrs":                "- networking.k8s.io/v1 false ServiceCIDR create,delete,deletecollection,get,list,patch,update,watch",
		"flowschemas":                 "- flowcontrol.apiserver.k8s.io/v1 false FlowSchema create,delete,deletecollection,get,list,patch,update,watch",
		"prioritylevelconfigurations": "- flowcontrol.apiserver.k8s.io/v1 false PriorityLevelConfiguration create,delete,deletecollection,get,list,patch,update,watch",
		"certificatesigningrequests":  "csr certificates.k8s.io/v1 false CertificateSigningRequest create,delete,deletecollection,get,list,patch,update,watch",
		"clustertrustbundles":         "- certificates.k8s.io/v1 false ClusterTrustBundle create,delete,deletecollection,get,list,patch,update,watch",
		"resourcequotas":              "quota v1 true ResourceQuota create,delete,deletecollection,get,list,patch,update,watch",
	}
	// The extension points' registration resources, all cluster-scoped and in api-extensions.
	for kind, plural := range map[string]string{"MutatingAdmissionPolicy": "mutatingadmissionpolicies",
		"MutatingAdmissionPolicyBinding": "mutatingadmissionpolicybindings", "MutatingWebhookConfiguration": "mutatingwebhookconfigurations",
		"ValidatingAdmissionPolicy": "validatingadmissionpolicies", "ValidatingAdmissionPolicyBinding": "validatingadmissionpolicybindings",
		"ValidatingWebhookConfiguration": "validatingwebhookconfigurations"} {
		want[plural] = "- admissionregistration.k8s.io/v1 false " + kind + " create,delete,deletecollection,get,list,patch,update,watch"
	}
	want["apiservices"] = "- apiregistration.k8s.io/v1 false APIService create,delete,deletecollection,get,list,patch,update,watch"
	// Categories as in kube-apiserver v1.37.2's discovery.
	categories := map[string]string{"services": "all", "customresourcedefinitions": "api-extensions", "apiservices": "api-extensions",
		"mutatingadmissionpolicies": "api-extensions", "mutatingadmissionpolicybindings": "api-extensions",
		"mutatingwebhookconfigurations": "api-extensions", "validatingadmissionpolicies": "api-extensions",
		"validatingadmissionpolicybindings": "api-extensions", "validatingwebhookconfigurations": "api-extensions"}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	header := lines[0]
	cols := []string{"NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND", "VERBS", "CATEGORIES"}
	starts := make([]int, len(cols))
	for i, c := range cols {
		if starts[i] = strings.Index(header, c); starts[i] < 0 {
			t.Fatalf("kubectl header %q lacks %s", header, c)
		}
	}
	got := map[string]string{}
	for _, line := range lines[1:] {
		var cells []string
		for i := range cols {
			end := len(line)
			if i+1 < len(cols) && starts[i+1] < end {
				end = starts[i+1]
			}
			cell := ""
			if starts[i] < len(line) {
				cell = strings.TrimSpace(line[starts[i]:end])
			}
			if cell == "" {
				cell = "-"
			}
			cells = append(cells, cell)
		}
		if want := cmp.Or(categories[cells[0]], "-"); cells[6] != want {
			t.Errorf("%s has categories %s, want %s", cells[0], cells[6], want)
		}
		key := cells[0]
		if _, dup := got[key]; dup {
			key += "." + strings.Split(cells[2], "/")[0]
		}
		got[key] = strings.Join(cells[1:6], " ")
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("kubectl api-resources:\n%s\nparsed %v", stdout.String(), got)
	}
}
