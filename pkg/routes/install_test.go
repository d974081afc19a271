package routes

import (
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"

	"github.com/apictl/apictl/internal/golden"
)

// TestMustShowBuiltin holds the routes issue 3 names for the built-in API.
func TestMustShowBuiltin(t *testing.T) {
	tb := Install(Builtin(), InstallOptions{})
	for _, want := range []struct{ method, path, id string }{
		{"GET", "/api/v1/namespaces/{namespace}/configmaps", "listCoreV1NamespacedConfigMap"},
		{"DELETE", "/api/v1/namespaces/{namespace}/configmaps", "deleteCoreV1CollectionNamespacedConfigMap"},
		{"GET", "/api/v1/watch/configmaps", "watchCoreV1ConfigMapListForAllNamespaces"},
		{"PUT", "/api/v1/namespaces/{name}/finalize", "replaceCoreV1NamespaceFinalize"},
		{"PATCH", "/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}", "patchCoordinationV1NamespacedLease"},
		{"GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles/{name}", "readRbacAuthorizationV1ClusterRole"},
	} {
		if r := findRoute(t, tb, want.method, want.path); r.OperationID != want.id {
			t.Errorf("%s %s: operation ID %s, want %s", want.method, want.path, r.OperationID, want.id)
		}
	}
}

// TestMustShowCRD: a CRD adds its routes, and --runtime-config removes them all.
func TestMustShowCRD(t *testing.T) {
	api := testAPI(t)
	tb := Install(api, InstallOptions{})
	r := findRoute(t, tb, "PUT", "/apis/example.com/v1/namespaces/{namespace}/widgets/{name}/status")
	if r.OperationID != "replaceExampleComV1NamespacedWidgetStatus" || r.Tag != "exampleCom_v1" {
		t.Errorf("operation ID %s tag %s", r.OperationID, r.Tag)
	}
	scale := findRoute(t, tb, "GET", "/apis/example.com/v1/namespaces/{namespace}/widgets/{name}/scale")
	if scale.ObjectKind.String() != "autoscaling/v1, Kind=Scale" || scale.Kind != "Widget" {
		t.Errorf("scale route kinds: %s, %s", scale.ObjectKind, scale.Kind)
	}
	patch := findRoute(t, tb, "PATCH", "/apis/example.com/v1/namespaces/{namespace}/widgets/{name}")
	if strings.Contains(strings.Join(patch.Consumes, ","), "strategic") {
		t.Errorf("a custom resource takes no strategic merge patch: %v", patch.Consumes)
	}

	off, err := ApplyRuntimeConfig(api, map[string]string{"example.com/v1": "false"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range Install(off, InstallOptions{}).Routes {
		if strings.Contains(r.Path, "/widgets") {
			t.Errorf("route %s %s survives example.com/v1=false", r.Method, r.Path)
		}
	}
	// gadgets are also served at v1beta1, which stays on.
	findRoute(t, Install(off, InstallOptions{}), "GET", "/apis/example.com/v1beta1/gadgets")
}

// TestInstallGolden pins the whole table of the built-in API and the test CRDs.
func TestInstallGolden(t *testing.T) {
	var b strings.Builder
	for _, r := range Install(testAPI(t), InstallOptions{Profiling: true}).Routes {
		fmt.Fprintf(&b, "%s\t%s\t%s%s\t%s\t%s\t%s\t%s\t%s\t%v\t%v\t%s\t%s\n", r.Method, r.Path, r.Action, r.Endpoint, r.Verb,
			r.Operation, r.OperationID, r.Tag, r.Scope, r.LongRunning, r.Deprecated, r.ObjectKind, r.Doc)
	}
	golden.Check(t, "install/table.tsv", b.String())
}

// TestActionOrder checks kube's order for a namespaced resource, a cluster one and a subresource.
func TestActionOrder(t *testing.T) {
	tb := Install(Builtin(), InstallOptions{})
	var got []string
	for _, r := range tb.Routes {
		if r.Resource == "namespaces" || r.Resource == "configmaps" {
			got = append(got, fmt.Sprintf("%s %s", r.Action, strings.TrimPrefix(r.Path, "/api/v1/")))
		}
	}
	want := []string{
		"LIST namespaces/{namespace}/configmaps",
		"POST namespaces/{namespace}/configmaps",
		"DELETECOLLECTION namespaces/{namespace}/configmaps",
		"WATCHLIST watch/namespaces/{namespace}/configmaps",
		"GET namespaces/{namespace}/configmaps/{name}",
		"PUT namespaces/{namespace}/configmaps/{name}",
		"PATCH namespaces/{namespace}/configmaps/{name}",
		"DELETE namespaces/{namespace}/configmaps/{name}",
		"WATCH watch/namespaces/{namespace}/configmaps/{name}",
		"LIST configmaps",
		"WATCHLIST watch/configmaps",
		"LIST namespaces",
		"POST namespaces",
		"WATCHLIST watch/namespaces",
		"GET namespaces/{name}",
		"PUT namespaces/{name}",
		"PATCH namespaces/{name}",
		"DELETE namespaces/{name}",
		"WATCH watch/namespaces/{name}",
		"PUT namespaces/{name}/finalize",
		"GET namespaces/{name}/status",
		"PUT namespaces/{name}/status",
		"PATCH namespaces/{name}/status",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("routes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// appsAPI is a model shaped like kube's apps and core groups, to check names kube publishes.
func appsAPI(t *testing.T) *API {
	t.Helper()
	scale := Subresource{Name: "scale", Group: "autoscaling", Version: "v1", Kind: "Scale", Verbs: []string{"get", "patch", "update"}, GoType: reflect.TypeFor[autoscalingv1.Scale]()}
	status := func(kind string) Subresource {
		return Subresource{Name: "status", Kind: kind, Verbs: []string{"get", "patch", "update"}}
	}
	workload := func(plural, kind string) Resource {
		return Resource{Plural: plural, Singular: strings.ToLower(kind), Kind: kind, ListKind: kind + "List", Namespaced: true,
			Verbs: StandardVerbs(), Subresources: []Subresource{scale, status(kind)}}
	}
	api, err := NewAPI([]Group{
		{Name: "", Versions: []Version{{Name: "v1", Resources: []Resource{
			{Plural: "pods", Singular: "pod", Kind: "Pod", ListKind: "PodList", Namespaced: true, Verbs: StandardVerbs(), Subresources: []Subresource{
				{Name: "exec", Kind: "PodExecOptions", ConnectMethods: []string{http.MethodGet, http.MethodPost}},
				{Name: "eviction", Group: "policy", Version: "v1", Kind: "Eviction", Verbs: []string{"create"}},
				{Name: "proxy", Kind: "PodProxyOptions", ConnectMethods: []string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"}, ConnectSubpath: true},
			}},
			{Plural: "nodes", Singular: "node", Kind: "Node", ListKind: "NodeList", Verbs: StandardVerbs()},
			{Plural: "endpoints", Singular: "endpoints", Kind: "Endpoints", ListKind: "EndpointsList", Namespaced: true, Verbs: StandardVerbs()},
			{Plural: "services", Singular: "service", Kind: "Service", ListKind: "ServiceList", Namespaced: true, Verbs: StandardVerbs(), Subresources: []Subresource{
				{Name: "proxy", Kind: "ServiceProxyOptions", ConnectMethods: []string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"}, ConnectSubpath: true},
			}},
		}}}},
		{Name: "apps", Versions: []Version{{Name: "v1", Resources: []Resource{
			workload("daemonsets", "DaemonSet"), workload("deployments", "Deployment"), workload("replicasets", "ReplicaSet"),
		}}}},
		{Name: "flowcontrol.apiserver.k8s.io", Versions: []Version{{Name: "v1beta1", Resources: []Resource{
			{Plural: "flowschemas", Singular: "flowschema", Kind: "FlowSchema", ListKind: "FlowSchemaList", Verbs: StandardVerbs()},
		}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	_ = appsv1.Deployment{}
	return api
}

// TestKubeOperationIDs checks IDs seen in kube's published OpenAPI and generated clients.
func TestKubeOperationIDs(t *testing.T) {
	tb := Install(appsAPI(t), InstallOptions{})
	byID := map[string]*Route{}
	for i := range tb.Routes {
		byID[tb.Routes[i].OperationID] = &tb.Routes[i]
	}
	for _, want := range []struct{ id, method, path, op, doc string }{
		{"watchAppsV1DeploymentListForAllNamespaces", "GET", "/apis/apps/v1/watch/deployments", "watchDeploymentListForAllNamespaces", ""},
		{"replaceAppsV1NamespacedDeploymentStatus", "PUT", "/apis/apps/v1/namespaces/{namespace}/deployments/{name}/status", "replaceNamespacedDeploymentStatus", "replace status of the specified Deployment"},
		{"readAppsV1NamespacedDeploymentScale", "GET", "/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale", "readNamespacedDeploymentScale", "read scale of the specified Deployment"},
		{"createAppsV1NamespacedReplicaSet", "POST", "/apis/apps/v1/namespaces/{namespace}/replicasets", "createNamespacedReplicaSet", "create a ReplicaSet"},
		{"readAppsV1NamespacedReplicaSet", "GET", "/apis/apps/v1/namespaces/{namespace}/replicasets/{name}", "readNamespacedReplicaSet", ""},
		{"watchAppsV1NamespacedDaemonSet", "GET", "/apis/apps/v1/watch/namespaces/{namespace}/daemonsets/{name}", "watchNamespacedDaemonSet", ""},
		{"watchAppsV1NamespacedDeploymentList", "GET", "/apis/apps/v1/watch/namespaces/{namespace}/deployments", "watchNamespacedDeploymentList", ""},
		{"connectCoreV1PutNamespacedServiceProxyWithPath", "PUT", "/api/v1/namespaces/{namespace}/services/{name}/proxy/{path:*}", "connectPutNamespacedServiceProxyWithPath", "connect PUT requests to proxy of Service"},
		{"connectCoreV1GetNamespacedPodExec", "GET", "/api/v1/namespaces/{namespace}/pods/{name}/exec", "connectGetNamespacedPodExec", "connect GET requests to exec of Pod"},
		{"createCoreV1NamespacedPodEviction", "POST", "/api/v1/namespaces/{namespace}/pods/{name}/eviction", "createNamespacedPodEviction", "create eviction of a Pod"},
		{"listCoreV1Node", "GET", "/api/v1/nodes", "listNode", "list or watch objects of kind Node"},
		{"createCoreV1NamespacedEndpoints", "POST", "/api/v1/namespaces/{namespace}/endpoints", "createNamespacedEndpoints", "create Endpoints"},
		{"deleteCoreV1NamespacedEndpoints", "DELETE", "/api/v1/namespaces/{namespace}/endpoints/{name}", "deleteNamespacedEndpoints", "delete Endpoints"},
		{"listFlowcontrolApiserverV1beta1FlowSchema", "GET", "/apis/flowcontrol.apiserver.k8s.io/v1beta1/flowschemas", "listFlowSchema", ""},
	} {
		r, ok := byID[want.id]
		if !ok {
			t.Errorf("no route with operation ID %s", want.id)
			continue
		}
		if r.Method != want.method || r.Path != want.path || r.Operation != want.op || (want.doc != "" && r.Doc != want.doc) {
			t.Errorf("%s: got %s %s %s %q", want.id, r.Method, r.Path, r.Operation, r.Doc)
		}
	}
	exec := findRoute(t, tb, "POST", "/api/v1/namespaces/{namespace}/pods/{name}/exec")
	if exec.Action != ActionConnect || exec.Verb != VerbCreate || !exec.LongRunning {
		t.Errorf("pods/exec POST: %+v", exec)
	}
	if got := findRoute(t, tb, "GET", "/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale").ObjectKind.Kind; got != "Scale" {
		t.Errorf("scale object kind %s", got)
	}
}

func TestOpenAPIOperation(t *testing.T) {
	tests := []struct{ op, path, id, tag string }{
		{"getAPIVersions", "/api", "getCoreAPIVersions", "core"},
		{"getAPIResources", "/api/v1", "getCoreV1APIResources", "core_v1"},
		{"getAPIVersions", "/apis", "getAPIVersions", "apis"},
		{"getAPIGroup", "/apis/rbac.authorization.k8s.io", "getRbacAuthorizationAPIGroup", "rbacAuthorization"},
		{"getCodeVersion", "/version", "getCodeVersion", "version"},
		{"listWidget", "/apis/my-group.example.com/v1alpha1/widgets", "listMyGroupExampleComV1alpha1Widget", "myGroupExampleCom_v1alpha1"},
		{"unknownVerb", "/apis/a.b/v1/x", "unknownVerb", ""},
	}
	for _, tt := range tests {
		id, tag := openAPIOperation(tt.op, tt.path)
		if id != tt.id || tag != tt.tag {
			t.Errorf("openAPIOperation(%s, %s) = %s, %s; want %s, %s", tt.op, tt.path, id, tag, tt.id, tt.tag)
		}
	}
}

func TestArticle(t *testing.T) {
	for noun, want := range map[string]string{"ConfigMap": " a ", "Event": " an ", "Endpoints": " ", "StorageClass": " a ", "Ingress": " an "} {
		if got := articleFor(noun); got != want {
			t.Errorf("articleFor(%s) = %q, want %q", noun, got, want)
		}
	}
}

func TestInstallNonResource(t *testing.T) {
	without := Install(Builtin(), InstallOptions{})
	with := Install(Builtin(), InstallOptions{Profiling: true})
	if len(with.Routes)-len(without.Routes) != 2 {
		t.Errorf("profiling adds %d routes, want 2", len(with.Routes)-len(without.Routes))
	}
	for _, p := range []string{"/", "/api", "/api/v1", "/apis", "/apis/coordination.k8s.io", "/apis/coordination.k8s.io/v1",
		"/healthz", "/healthz/{path:*}", "/livez", "/livez/{path:*}", "/readyz", "/readyz/{path:*}", "/version", "/metrics",
		"/openapi/v2", "/openapi/v3", "/openapi/v3/{path:*}"} {
		findRoute(t, without, "GET", p)
	}
	findRoute(t, with, "GET", "/debug/pprof/{path:*}")
}

// TestSubresourceSortOrder: kube sorts storage keys, so a resource whose name extends another's
// comes between that resource and its subresources.
func TestSubresourceSortOrder(t *testing.T) {
	api, err := NewAPI([]Group{{Name: "x.io", Versions: []Version{{Name: "v1", Resources: []Resource{
		{Plural: "foo", Kind: "Foo", ListKind: "FooList", Verbs: []string{"get"}, Subresources: []Subresource{{Name: "status", Kind: "Foo", Verbs: []string{"get"}}}},
		{Plural: "foo-bar", Kind: "FooBar", ListKind: "FooBarList", Verbs: []string{"get"}},
	}}}}})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, r := range Install(api, InstallOptions{}).Routes {
		if r.IsResource() {
			paths = append(paths, strings.TrimPrefix(r.Path, "/apis/x.io/v1/"))
		}
	}
	if want := "foo/{name} foo-bar/{name} foo/{name}/status"; strings.Join(paths, " ") != want {
		t.Errorf("paths %q, want %q", strings.Join(paths, " "), want)
	}
}

// TestEstimateRoutes: the table is allocated once.
func TestEstimateRoutes(t *testing.T) {
	for _, api := range []*API{testAPI(t), appsAPI(t), Builtin()} {
		tb := Install(api, InstallOptions{Profiling: true})
		if est := estimateRoutes(api); len(tb.Routes) > est {
			t.Errorf("%d routes, estimated %d", len(tb.Routes), est)
		}
	}
}
