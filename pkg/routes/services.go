//lint:file-ignore SA1019 core v1 Endpoints are deprecated in kube, which still serves them: so does apictl.

package routes

import (
	"reflect"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/endpoints/deprecation"
)

// services are in the "all" category and have a status subresource (the load balancer's ingress). kube
// also serves services/proxy, a connect subresource that proxies to the service's endpoints; apictl
// proxies nothing, so it is left out.
func services() Resource {
	doc := corev1.ServiceSpec{}.SwaggerDoc()
	svc := reflect.TypeFor[corev1.Service]()
	r := builtin("", "v1", "services", "service", "Service", true, StandardVerbs(), []string{"svc"},
		svc, reflect.TypeFor[corev1.ServiceList](),
		nameColumn(),
		computedColumn("Type", doc["type"], 0),
		computedColumn("Cluster-IP", doc["clusterIP"], 0),
		computedColumn("External-IP", doc["externalIPs"], 0),
		computedColumn("Port(s)", doc["ports"], 0),
		ageColumn(),
		computedColumn("Selector", doc["selector"], 1))
	r.Categories = []string{"all"}
	r.Subresources = []Subresource{{Name: "status", Kind: "Service", Verbs: []string{VerbGet, VerbPatch, VerbUpdate}, GoType: svc}}
	return r
}

// endpoints is singular and plural at once ("endpoints"), as kube names it. kube deprecated it in
// 1.33 in favour of EndpointSlices, and says so on every request, in the words of k8s.io/apiserver's
// deprecation package.
func endpoints() Resource {
	r := builtin("", "v1", "endpoints", "endpoints", "Endpoints", true, StandardVerbs(), []string{"ep"},
		reflect.TypeFor[corev1.Endpoints](), reflect.TypeFor[corev1.EndpointsList](),
		nameColumn(), computedColumn("Endpoints", corev1.Endpoints{}.SwaggerDoc()["subsets"], 0), ageColumn())
	r.Deprecated = true
	r.DeprecationWarning = deprecation.WarningMessage(&corev1.Endpoints{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Endpoints"}})
	return r
}

func discoveryV1() []Resource {
	doc := discoveryv1.EndpointSlice{}.SwaggerDoc()
	return []Resource{
		builtin(GroupDiscovery, "v1", "endpointslices", "endpointslice", "EndpointSlice", true, StandardVerbs(), nil,
			reflect.TypeFor[discoveryv1.EndpointSlice](), reflect.TypeFor[discoveryv1.EndpointSliceList](),
			nameColumn(),
			pathColumn("AddressType", doc["addressType"], 0, ".addressType"),
			computedColumn("Ports", doc["ports"], 0),
			computedColumn("Endpoints", doc["endpoints"], 0),
			ageColumn()),
	}
}
