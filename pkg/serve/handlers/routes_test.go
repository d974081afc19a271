package handlers_test

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/apictl/apictl/pkg/routes"
)

// probeObjects are valid objects of every resource of the test API, named probe, for the routes
// that need one to exist.
var probeObjects = map[string]string{
	"configmaps":               `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"%s"}}`,
	"podtemplates":             `{"apiVersion":"v1","kind":"PodTemplate","metadata":{"name":"%s"},"template":{"spec":{"containers":[{"name":"c","image":"nginx"}]}}}`,
	"secrets":                  `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"%s"}}`,
	"serviceaccounts":          `{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"%s"}}`,
	"services":                 `{"apiVersion":"v1","kind":"Service","metadata":{"name":"%s"},"spec":{"ports":[{"port":80}]}}`,
	"endpoints":                `{"apiVersion":"v1","kind":"Endpoints","metadata":{"name":"%s"},"subsets":[{"addresses":[{"ip":"10.1.0.1"}]}]}`,
	"endpointslices":           `{"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice","metadata":{"name":"%s"},"addressType":"IPv4","endpoints":[]}`,
	"events":                   `{"apiVersion":"v1","kind":"Event","metadata":{"name":"%s"},"involvedObject":{"kind":"ConfigMap","name":"x"}}`,
	"namespaces":               `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"%s"}}`,
	"leases":                   `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"%s"}}`,
	"roles":                    `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"%s"}}`,
	"clusterroles":             `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"%s"}}`,
	"rolebindings":             `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"%s"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"r"}}`,
	"clusterrolebindings":      `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{"name":"%s"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"r"}}`,
	"widgets":                  `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"%s"},"spec":{"replicas":1}}`,
	"resourcequotas":           `{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"%s"},"spec":{"hard":{"count/configmaps":"100"}}}`,
	"storageversionmigrations": `{"apiVersion":"storagemigration.k8s.io/v1","kind":"StorageVersionMigration","metadata":{"name":"%s"},"spec":{"resource":{"group":"","resource":"configmaps"}}}`,
	"servicecidrs":             `{"apiVersion":"networking.k8s.io/v1","kind":"ServiceCIDR","metadata":{"name":"%s"},"spec":{"cidrs":["10.9.0.0/24"]}}`,
	// An IPAddress is named by its address (probeName).
	"ipaddresses":                 `{"apiVersion":"networking.k8s.io/v1","kind":"IPAddress","metadata":{"name":"%s"},"spec":{"parentRef":{"resource":"probes","name":"p"}}}`,
	"flowschemas":                 `{"apiVersion":"flowcontrol.apiserver.k8s.io/v1","kind":"FlowSchema","metadata":{"name":"%s"},"spec":{"priorityLevelConfiguration":{"name":"global-default"}}}`,
	"prioritylevelconfigurations": `{"apiVersion":"flowcontrol.apiserver.k8s.io/v1","kind":"PriorityLevelConfiguration","metadata":{"name":"%s"},"spec":{"type":"Limited","limited":{"limitResponse":{"type":"Reject"}}}}`,
	"certificatesigningrequests": `{"apiVersion":"certificates.k8s.io/v1","kind":"CertificateSigningRequest","metadata":{"name":"%s"},` +
		`"spec":{"signerName":"example.com/probe","usages":["client auth"],"request":"LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KTUlISk1ISUNBUUF3RURFT01Bd0dBMVVFQXd3RmNISnZZbVV3V1RBVEJnY3Foa2pPUFFJQkJnZ3Foa2pPUFFNQgpCd05DQUFRcFJGcTlXM2FBMHFrcUpOdG5DdThxZUtSOXpxWkgrWW9VcTdMTGZyaEFIOHhNNnFvcWVYVWNRTWdnCnRhVkZ4T3MvNStXNDloWFc3L0VQSUVYT2Q0SFNvQUF3Q2dZSUtvWkl6ajBFQXdJRFJ3QXdSQUlnYVZRTnc0aGYKd2lKcUNZclg2UDRBVE4va3EyWUhnMEVKQXVHV08waXdMaUlDSUJRRFJXLzg2b0VTam8vWUdKdU1vS3dBN21ZegpTc1VkQ0R4RTJXbUFOUTdtCi0tLS0tRU5EIENFUlRJRklDQVRFIFJFUVVFU1QtLS0tLQo="}}`,
	"clustertrustbundles": `{"apiVersion":"certificates.k8s.io/v1","kind":"ClusterTrustBundle","metadata":{"name":"%s"},` +
		`"spec":{"trustBundle":"-----BEGIN CERTIFICATE-----\nMIIBfTCCASOgAwIBAgIUOMKizAAL6ABNxGYHa7XROzaUE5gwCgYIKoZIzj0EAwIw\nEzERMA8GA1UEAwwIcHJvYmUtY2EwIBcNMjYxMjAyMDczMTQzWhgPMjEyNjExMDgw\nNzMxNDNaMBMxETAPBgNVBAMMCHByb2JlLWNhMFkwEwYHKoZIzj0CAQYIKoZIzj0D\nAQcDQgAEMgbZiciBhYActskUc4NJA6+LimasVCbiuY2XBU8chr44ycMWkCodO+KH\nL8MIlgh75J+Oj/ySq9CHpbp7H8dD36NTMFEwHQYDVR0OBBYEFNog11CmjRwQG8Ng\nLvKJHaISR5ewMB8GA1UdIwQYMBaAFNog11CmjRwQG8NgLvKJHaISR5ewMA8GA1Ud\nEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDSAAwRQIhAJ0xQ3OUPtUFYFivLMn4nEIu\nddU8bCQRay+/+4FUcKqNAiAsAhn6Di9qKij+r8K3lUruMep9f+cxurOCf6m54ArF\nhw==\n-----END CERTIFICATE-----\n"}}`,

	// events.k8s.io/v1 events are the core events: theirs are named apart (probeName).
	"events.k8s.io/events": `{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"%s-v1"},"eventTime":"2026-01-01T00:00:00.000000Z",` +
		`"reportingController":"example.com/probe","reportingInstance":"i","action":"Probe","reason":"Probe","type":"Normal","regarding":{"kind":"ConfigMap","namespace":"default","name":"x"}}`,
	// A CRD's name is <plural>.<group>: %s is the plural (probeName).
	"customresourcedefinitions": `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"%[1]ss.probe.example.com"},` +
		`"spec":{"group":"probe.example.com","scope":"Namespaced","names":{"plural":"%[1]ss","kind":"Probe"},` +
		`"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object"}}}]}}`,
	// The review APIs store nothing: each POST is answered, the name going where the kind allows.
	"selfsubjectreviews":        `{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview","status":{"userInfo":{"username":"%s"}}}`,
	"tokenreviews":              `{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":{"token":"%s"}}`,
	"localsubjectaccessreviews": `{"spec":{"user":"%s","resourceAttributes":{"namespace":"default","verb":"get","resource":"pods"}}}`,
	"selfsubjectaccessreviews":  `{"spec":{"resourceAttributes":{"verb":"get","resource":"pods","name":"%s"}}}`,
	"selfsubjectrulesreviews":   `{"spec":{"namespace":"%s"}}`,
	"subjectaccessreviews":      `{"spec":{"user":"%s","nonResourceAttributes":{"verb":"get","path":"/version"}}}`,
	// A TokenRequest for the ServiceAccount probe (%s is the name it may carry: empty, or probe's).
	"serviceaccounts/token": `{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","metadata":{"name":"%.0s"},"spec":{}}`,

	// Admission configurations that admit everything: no webhooks, and policies of a resource
	// nobody writes. An APIService's name is <version>.<group>: %s names the group.
	"validatingwebhookconfigurations": `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingWebhookConfiguration","metadata":{"name":"%s"}}`,
	"mutatingwebhookconfigurations":   `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"MutatingWebhookConfiguration","metadata":{"name":"%s"}}`,
	"validatingadmissionpolicies": `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicy","metadata":{"name":"%s"},` +
		`"spec":{"matchConstraints":{"resourceRules":[{"operations":["CREATE"],"apiGroups":["probe.example.com"],"apiVersions":["v1"],"resources":["nothings"]}]},` +
		`"validations":[{"expression":"true"}]}}`,
	"validatingadmissionpolicybindings": `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicyBinding","metadata":{"name":"%s"},` +
		`"spec":{"policyName":"probe","validationActions":["Audit"]}}`,
	"mutatingadmissionpolicies": `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"MutatingAdmissionPolicy","metadata":{"name":"%s"},` +
		`"spec":{"matchConstraints":{"resourceRules":[{"operations":["CREATE"],"apiGroups":["probe.example.com"],"apiVersions":["v1"],"resources":["nothings"]}]},` +
		`"reinvocationPolicy":"Never","mutations":[{"patchType":"ApplyConfiguration","applyConfiguration":{"expression":"Object{}"}}]}}`,
	"mutatingadmissionpolicybindings": `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"MutatingAdmissionPolicyBinding","metadata":{"name":"%s"},` +
		`"spec":{"policyName":"probe"}}`,
	"apiservices": `{"apiVersion":"apiregistration.k8s.io/v1","kind":"APIService","metadata":{"name":"v1.%[1]s.example.com"},` +
		`"spec":{"group":"%[1]s.example.com","version":"v1","groupPriorityMinimum":100,"versionPriority":10}}`,
}

// probeName is the name of the probe object of a resource: probe, or what the kind requires of a
// name made from it.
func probeName(group, resource, name string) string {
	if group == routes.GroupEvents {
		return name + "-v1"
	}
	switch resource {
	case "customresourcedefinitions":
		return name + "s.probe.example.com"
	case "apiservices":
		return "v1." + name + ".example.com"
	}
	return objectName(resource, name)
}

// objectName is the name of the probe object called name where a kind's names are not free: an
// IPAddress is named by its address.
func objectName(resource, name string) string {
	if resource == "ipaddresses" {
		return map[string]string{"probe": "192.0.2.1", "probe-posted": "192.0.2.2"}[name]
	}
	return name
}

// probeObject is the probe object of a route's resource: its group's when the plural is served by
// several groups.
func probeObject(r routes.Route) string {
	if o, ok := probeObjects[r.Group+"/"+r.Resource]; ok {
		return o
	}
	return probeObjects[r.Resource]
}

// TestEveryRouteAnswers sends a request to every route `apictl routes` prints for the built-in API
// plus a CRD, and requires the status and content type a working route answers with: what the table
// says is what the server serves.
func TestEveryRouteAnswers(t *testing.T) {
	a := start(t)
	api, err := routes.LoadAPI([]string{"testdata/widgets.yaml"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	table := routes.Install(api, routes.InstallOptions{Profiling: true})

	// The object every {name} route addresses, in the default namespace (or the namespace named probe).
	for _, r := range table.Routes {
		if r.Action != routes.ActionPost || r.Subresource != "" {
			continue
		}
		path := strings.ReplaceAll(r.Path, "{namespace}", "default")
		a.do("POST", path, fmt.Sprintf(probeObject(r), objectName(r.Resource, "probe"))).expect(t, http.StatusCreated)
	}

	// Deletes go last, objects before collections, so that each delete still finds its object.
	var deletes, collections []routes.Route
	for _, r := range table.Routes {
		switch r.Action {
		case routes.ActionDelete:
			deletes = append(deletes, r)
		case routes.ActionDeleteCollection:
			collections = append(collections, r)
		default:
			checkRoute(t, a, r)
		}
	}
	// The CRDs' collection goes after every other: deleting it ends the custom resources' routes,
	// and under -race the cleanup can finish before their own collection's turn.
	slices.SortStableFunc(collections, func(x, y routes.Route) int {
		return cmp.Compare(boolInt(x.Resource == "customresourcedefinitions"), boolInt(y.Resource == "customresourcedefinitions"))
	})
	for _, r := range append(deletes, collections...) {
		checkRoute(t, a, r)
	}
	a.do("GET", "/api/v1/namespaces/default/nothings", "").expect(t, 404, `"kind":"Status"`, `"reason":"NotFound"`)
	a.do("GET", "/not/a/path", "").expect(t, 404, "404 page not found\n")
}

// routeAnswers is what a working route answers a well-formed request with: status and content type.
var routeAnswers = map[routes.Action]struct {
	code        int
	contentType string
}{
	routes.ActionGet: {200, "application/json"}, routes.ActionList: {200, "application/json"},
	routes.ActionPost: {201, "application/json"}, routes.ActionPut: {200, "application/json"},
	routes.ActionPatch: {200, "application/json"}, routes.ActionDelete: {200, "application/json"},
	routes.ActionDeleteCollection: {200, "application/json"},
	routes.ActionWatch:            {200, "application/json"}, routes.ActionWatchList: {200, "application/json"},
}

// endpointContentTypes are the content types of the non-resource endpoints, as kube serves them.
var endpointContentTypes = map[routes.Endpoint]string{
	routes.EndpointIndex: "application/json", routes.EndpointAPIVersions: "application/json",
	routes.EndpointAPIGroupList: "application/json", routes.EndpointAPIGroup: "application/json",
	routes.EndpointAPIResourceList: "application/json", routes.EndpointVersion: "application/json",
	routes.EndpointHealthz: "text/plain; charset=utf-8", routes.EndpointLivez: "text/plain; charset=utf-8",
	routes.EndpointReadyz: "text/plain; charset=utf-8", routes.EndpointMetrics: "text/plain; version=0.0.4; charset=utf-8; escaping=underscores",
	routes.EndpointOpenAPIV2: "application/json", routes.EndpointOpenAPIV3: "application/json",
	routes.EndpointOpenIDConfiguration: "application/json", routes.EndpointOpenIDKeys: "application/jwk-set+json",
	routes.EndpointStatus:    "application/json",
	routes.EndpointProfiling: "application/octet-stream",
}

func checkRoute(t *testing.T, a *api, r routes.Route) {
	t.Helper()
	path := strings.NewReplacer("{namespace}", "default", "{name}", probeName(r.Group, r.Resource, "probe")).Replace(r.Path)
	if strings.HasSuffix(path, "{path:*}") {
		sub := map[routes.Endpoint]string{
			routes.EndpointHealthz: "ping", routes.EndpointLivez: "ping", routes.EndpointReadyz: "ping",
			routes.EndpointOpenAPIV3: "api/v1", routes.EndpointProfiling: "heap",
		}[r.Endpoint]
		path = strings.TrimSuffix(path, "{path:*}") + sub
	}
	want, ok := routeAnswers[r.Action]
	if r.Endpoint != "" {
		want.code, want.contentType, ok = 200, endpointContentTypes[r.Endpoint], endpointContentTypes[r.Endpoint] != ""
		if r.Endpoint == routes.EndpointProfiling && !strings.HasSuffix(path, "/heap") {
			want.contentType = "text/html; charset=utf-8" // the index of profiles, Go's net/http/pprof page
		}
	}
	if !ok {
		t.Errorf("%s %s (%s %s): the test does not know what this route answers", r.Method, path, r.Action, r.Endpoint)
		return
	}
	var got response
	if r.LongRunning {
		// A watch answers with its headers at once; the stream itself is not this test's business.
		req, _ := http.NewRequest(r.Method, a.InsecureURL+path+"?timeoutSeconds=1", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", r.Method, path, err)
		}
		resp.Body.Close()
		got = response{code: resp.StatusCode, header: resp.Header}
	} else {
		body, headers := "", []string(nil)
		switch r.Method {
		case http.MethodPost:
			probe := probeObject(r)
			if r.Subresource != "" {
				probe = probeObjects[r.Resource+"/"+r.Subresource]
			}
			body = fmt.Sprintf(probe, objectName(r.Resource, "probe-posted"))
		case http.MethodPut:
			body = a.do("GET", strings.TrimSuffix(strings.TrimSuffix(path, "/status"), "/finalize"), "").body
			if r.Subresource == "scale" {
				body = a.do("GET", path, "").body
			}
		case http.MethodPatch:
			body, headers = `{}`, []string{"Content-Type: application/merge-patch+json"}
		}
		got = a.do(r.Method, path, body, headers...)
	}
	if got.code != want.code || got.header.Get("Content-Type") != want.contentType {
		t.Errorf("%s %s (%s %s) answered %d %q, want %d %q: %.300s", r.Method, path, r.Action, r.Endpoint,
			got.code, got.header.Get("Content-Type"), want.code, want.contentType, got.body)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
