package routes

import (
	"net/http"
	"slices"
	"strings"
)

// nonResourceRoutes are the routes outside any resource: the index, discovery, health, version,
// metrics, OpenAPI, apictl's status and, with profiling, pprof. They are sorted by path, as the index
// lists them.
func nonResourceRoutes(api *API, opts InstallOptions) []Route {
	var out []Route
	// get appends a route and returns it for completion before the next append moves the slice.
	get := func(path string, e Endpoint, doc string, produces []string) *Route {
		out = append(out, Route{Method: http.MethodGet, Path: path, Endpoint: e, Verb: "get", Doc: doc, Produces: produces})
		return &out[len(out)-1]
	}
	named := func(r *Route, op string) {
		r.Operation = op
		r.OperationID, r.Tag = openAPIOperation(op, r.Path)
	}

	get("/", EndpointIndex, "list the paths the server serves", mediaJSONOnly)
	get("/apictl/v1/status", EndpointStatus, "the control plane's health, etcd, snapshots, certificates, controllers, API size and load (apictl status)", mediaJSONOnly)
	named(get("/apis", EndpointAPIGroupList, "get available API versions", mediaDiscoveryRoots), "getAPIVersions")
	for _, g := range api.Groups() {
		if g.Name == GroupCore {
			r := get("/api", EndpointAPIVersions, "get available API versions", mediaDiscoveryRoots)
			named(r, "getAPIVersions")
			for _, v := range g.Versions {
				r := get(GroupVersionPath(GroupCore, v.Name), EndpointAPIResourceList, "get available resources", mediaJSONOnly)
				r.Version = v.Name
				named(r, "getAPIResources")
			}
			continue
		}
		r := get("/apis/"+g.Name, EndpointAPIGroup, "get information of a group", mediaJSONOnly)
		r.Group = g.Name
		named(r, "getAPIGroup")
		for _, v := range g.Versions {
			r := get(GroupVersionPath(g.Name, v.Name), EndpointAPIResourceList, "get available resources", mediaJSONOnly)
			r.Group, r.Version = g.Name, v.Name
			named(r, "getAPIResources")
		}
	}
	for _, check := range []struct {
		path string
		e    Endpoint
		what string
	}{{"/healthz", EndpointHealthz, "healthy"}, {"/livez", EndpointLivez, "alive"}, {"/readyz", EndpointReadyz, "ready to serve"}} {
		get(check.path, check.e, "check whether the server is "+check.what+" (?verbose lists each check, ?exclude=<check> skips one)", mediaText)
		get(check.path+"/{path:*}", check.e, "run one check of "+check.path, mediaText)
	}
	named(get("/version", EndpointVersion, "get the code version", mediaJSONOnly), "getCodeVersion")
	get("/metrics", EndpointMetrics, "metrics in the Prometheus text format", mediaText)
	named(get("/.well-known/openid-configuration", EndpointOpenIDConfiguration,
		"get service account issuer OpenID configuration, also known as the 'OIDC discovery doc'", mediaJSONOnly), "getServiceAccountIssuerOpenIDConfiguration")
	named(get("/openid/v1/jwks", EndpointOpenIDKeys, "get service account issuer OpenID JSON Web Key Set (contains public token verification keys)",
		[]string{MediaJWKSet}), "getServiceAccountIssuerOpenIDKeyset")
	get("/openapi/v2", EndpointOpenAPIV2, "the OpenAPI v2 document of every path", mediaJSONOnly)
	get("/openapi/v3", EndpointOpenAPIV3, "the index of the OpenAPI v3 documents, one per group version", mediaJSONOnly)
	get("/openapi/v3/{path:*}", EndpointOpenAPIV3, "the OpenAPI v3 document of one group version, such as api/v1", mediaJSONOnly)
	if opts.Profiling {
		get("/debug/pprof", EndpointProfiling, "redirect to /debug/pprof/", mediaAnything)
		get("/debug/pprof/{path:*}", EndpointProfiling, "Go runtime profiles (index, profile, symbol, trace and named profiles)", mediaAnything)
	}
	slices.SortStableFunc(out, func(a, b Route) int { return strings.Compare(a.Path, b.Path) })
	return out
}
