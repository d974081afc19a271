package routes

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Action is what a resource route does, named as kube's installer names it.
type Action string

// The actions in the order kube's installer registers them for a resource.
const (
	ActionList             Action = "LIST"
	ActionPost             Action = "POST"
	ActionDeleteCollection Action = "DELETECOLLECTION"
	ActionWatchList        Action = "WATCHLIST"
	ActionGet              Action = "GET"
	ActionPut              Action = "PUT"
	ActionPatch            Action = "PATCH"
	ActionDelete           Action = "DELETE"
	ActionWatch            Action = "WATCH"
	ActionConnect          Action = "CONNECT"
)

// RouteScope says how a resource route addresses objects.
type RouteScope string

// Scopes of resource routes. AllNamespaces routes list or watch a namespaced resource across every
// namespace (/api/v1/configmaps).
const (
	RouteScopeNamespaced    RouteScope = "Namespaced"
	RouteScopeCluster       RouteScope = "Cluster"
	RouteScopeAllNamespaces RouteScope = "AllNamespaces"
)

// Endpoint says which server function a non-resource route reaches.
type Endpoint string

// Non-resource endpoints.
const (
	EndpointIndex           Endpoint = "index"             // /: the sorted list of paths
	EndpointAPIVersions     Endpoint = "api-versions"      // /api: APIVersions
	EndpointAPIGroupList    Endpoint = "api-group-list"    // /apis: APIGroupList
	EndpointAPIGroup        Endpoint = "api-group"         // /apis/<group>: APIGroup
	EndpointAPIResourceList Endpoint = "api-resource-list" // /api/v1, /apis/<group>/<version>: APIResourceList
	EndpointHealthz         Endpoint = "healthz"           // /healthz and /healthz/<check>
	EndpointLivez           Endpoint = "livez"             // /livez and /livez/<check>
	EndpointReadyz          Endpoint = "readyz"            // /readyz and /readyz/<check>
	EndpointVersion         Endpoint = "version"           // /version
	EndpointMetrics         Endpoint = "metrics"           // /metrics
	EndpointOpenAPIV2       Endpoint = "openapi-v2"        // /openapi/v2
	EndpointOpenAPIV3       Endpoint = "openapi-v3"        // /openapi/v3 (index) and /openapi/v3/<prefix>
	EndpointProfiling       Endpoint = "profiling"         // /debug/pprof and below
	// EndpointOpenIDConfiguration and EndpointOpenIDKeys are the service-account issuer's OIDC
	// discovery: /.well-known/openid-configuration and /openid/v1/jwks.
	EndpointOpenIDConfiguration Endpoint = "openid-configuration"
	EndpointOpenIDKeys          Endpoint = "openid-keys"
	// EndpointStatus is /apictl/v1/status: `apictl status`'s report, for system:apictl:status-reader.
	EndpointStatus Endpoint = "apictl-status"
)

// Media types of routes.
const (
	MediaJSON           = "application/json"
	MediaYAML           = "application/yaml"
	MediaJSONWatch      = "application/json;stream=watch"
	MediaJSONPatch      = "application/json-patch+json"
	MediaMergePatch     = "application/merge-patch+json"
	MediaStrategicPatch = "application/strategic-merge-patch+json"
	MediaApplyPatch     = "application/apply-patch+yaml"
	MediaText           = "text/plain"
	MediaAny            = "*/*"
	// MediaAggregatedDiscovery is what clients send in Accept to get aggregated discovery from /api
	// and /apis; the server answers with the same type.
	MediaAggregatedDiscovery = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

	// MediaJWKSet is a JSON Web Key Set (RFC 7517), as /openid/v1/jwks answers.
	MediaJWKSet = "application/jwk-set+json"
)

// Route is one method and path the server answers: plain data, the same for the server's mux,
// discovery, OpenAPI and `apictl routes`.
type Route struct {
	// Method is the HTTP method; Path uses {namespace}, {name} and {path:*} (the rest of the path).
	Method string `json:"method"`
	Path   string `json:"path"`

	// Action is what a resource route does; empty for non-resource routes.
	Action Action `json:"action,omitempty"`
	// Endpoint is the function of a non-resource route; empty for resource routes.
	Endpoint Endpoint `json:"endpoint,omitempty"`
	// Verb is the discovery and authorization verb: list, create, ... for resources, the lower-case
	// method (get) for non-resource routes.
	Verb string `json:"verb"`
	// Operation is the go-restful operation name kube gives the route (listNamespacedConfigMap);
	// OperationID the OpenAPI operationId (listCoreV1NamespacedConfigMap) and Tag its OpenAPI tag
	// (core_v1). All three are empty for routes that kube leaves out of OpenAPI.
	Operation   string `json:"operation,omitempty"`
	OperationID string `json:"operationID,omitempty"`
	Tag         string `json:"tag,omitempty"`

	// Scope is set for resource routes.
	Scope RouteScope `json:"scope,omitempty"`
	// Group, Version, Resource and Subresource say what the route serves. Discovery routes of a
	// group or group version set Group and Version.
	Group       string `json:"group"`
	Version     string `json:"version,omitempty"`
	Resource    string `json:"resource,omitempty"`
	Subresource string `json:"subresource,omitempty"`
	// Kind names the route in docs and operations: the parent's kind for a subresource.
	Kind string `json:"kind,omitempty"`
	// ObjectKind is the kind of the object the route reads and writes: autoscaling/v1 Scale for a
	// scale subresource, the resource's kind otherwise; the list kind is the resource's ListKind.
	ObjectKind metav1.GroupVersionKind `json:"objectKind,omitzero"`
	// Doc is the route's description, as kube words it.
	Doc string `json:"doc,omitempty"`
	// LongRunning routes (WATCH, WATCHLIST, CONNECT) stream; the server exempts them from request
	// timeouts and in-flight limits. A LIST with ?watch=true becomes long-running at request time.
	LongRunning bool `json:"longRunning,omitempty"`
	// Deprecated marks the watch/ paths, deprecated since Kubernetes 1.11 and still installed.
	Deprecated bool `json:"deprecated,omitempty"`
	// Consumes and Produces are the request and response media types. The slices are shared
	// between routes: do not modify them.
	Consumes []string `json:"consumes,omitempty"`
	Produces []string `json:"produces,omitempty"`
}

// IsResource reports whether the route serves a resource rather than a non-resource endpoint.
func (r *Route) IsResource() bool { return r.Resource != "" }

// GroupVersion returns the route's group version.
func (r *Route) GroupVersion() schema.GroupVersion {
	return schema.GroupVersion{Group: r.Group, Version: r.Version}
}

// GroupVersionPath is the path of a group version: /api/<version> for the core group (GroupCore),
// /apis/<group>/<version> for the others. Its routes and its discovery document live there.
func GroupVersionPath(group, version string) string {
	if group == GroupCore {
		return "/api/" + version
	}
	return "/apis/" + group + "/" + version
}

// Table is the route table: resource routes by group version in discovery order, resources sorted
// within each, in kube's action order; then the non-resource routes.
type Table struct {
	Routes []Route `json:"routes"`
}
