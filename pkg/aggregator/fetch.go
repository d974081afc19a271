package aggregator

import (
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/kube-openapi/pkg/aggregator"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/apictl/apictl/pkg/serve/request"
)

// fetchTimeout bounds each fetch of a remote document, as kube's discovery manager bounds its own.
const fetchTimeout = 5 * time.Second

// aggregatorUser is who the aggregator fetches remote discovery and OpenAPI as.
var aggregatorUser = request.User{Name: "system:kube-aggregator", Groups: []string{request.GroupMasters}}

// get sends a GET for path through h, the APIService's proxy, and records the answer.
func get(ctx context.Context, h http.Handler, path, accept, etag string) (*httptest.ResponseRecorder, error) {
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	u := aggregatorUser
	req, err := http.NewRequestWithContext(request.WithUser(ctx, &u), http.MethodGet, path, nil)
	if err != nil {
		return nil, fmt.Errorf("creating the request for %s: %w", path, err)
	}
	req.Header.Set("Accept", accept)
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec, nil
}

// discoveryResult is a remote group version's discovery as last fetched.
type discoveryResult struct {
	version apidiscoveryv2.APIVersionDiscovery
	etag    string
}

// fetchDiscovery fetches a remote group version's discovery as kube's discovery manager does: the
// server's aggregated /apis (If-None-Match the last ETag), or, when the server does not serve
// aggregated discovery, its /apis/<group>/<version>.
func fetchDiscovery(ctx context.Context, h http.Handler, gv schema.GroupVersion, last *discoveryResult) (*discoveryResult, error) {
	var etag string
	if last != nil {
		etag = last.etag
	}
	rec, err := get(ctx, h, "/apis", discovery.AcceptV2, etag)
	if err != nil {
		return nil, err
	}
	switch {
	case rec.Code == http.StatusNotModified && last != nil:
		return last, nil
	case rec.Code == http.StatusServiceUnavailable:
		return nil, fmt.Errorf("service of %s returned non-success response code: %d", gv, rec.Code)
	case rec.Code == http.StatusOK && isAggregatedDiscovery(rec.Header().Get("Content-Type")):
		var list apidiscoveryv2.APIGroupDiscoveryList
		if err := json.Unmarshal(rec.Body.Bytes(), &list); err != nil {
			return nil, fmt.Errorf("reading the aggregated discovery of %s: %w", gv, err)
		}
		out := &discoveryResult{version: apidiscoveryv2.APIVersionDiscovery{Version: gv.Version}, etag: rec.Header().Get("ETag")}
		for _, g := range list.Items {
			if g.Name != gv.Group {
				continue
			}
			for _, v := range g.Versions {
				if v.Version == gv.Version {
					out.version = v
				}
			}
		}
		fillResponseKinds(out.version.Resources)
		out.version.Freshness = apidiscoveryv2.DiscoveryFreshnessCurrent
		return out, nil
	}
	path := "/apis/" + gv.Group + "/" + gv.Version
	rec, err = get(ctx, h, path, "application/json", "")
	if err != nil {
		return nil, err
	}
	if rec.Code != http.StatusOK {
		return nil, fmt.Errorf("failed to download legacy discovery for %s: %s", path, strings.TrimSpace(rec.Body.String()))
	}
	var list metav1.APIResourceList
	if err := json.Unmarshal(rec.Body.Bytes(), &list); err != nil {
		return nil, fmt.Errorf("reading the discovery of %s: %w", gv, err)
	}
	resources, err := toAggregated(list.APIResources)
	if err != nil {
		return nil, fmt.Errorf("converting the discovery of %s: %w", gv, err)
	}
	return &discoveryResult{version: apidiscoveryv2.APIVersionDiscovery{Version: gv.Version, Resources: resources,
		Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent}}, nil
}

// isAggregatedDiscovery reports whether a Content-Type is apidiscovery.k8s.io/v2's list.
func isAggregatedDiscovery(contentType string) bool {
	mt, params, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "application/json" &&
		params["g"] == "apidiscovery.k8s.io" && params["v"] == "v2" && params["as"] == "APIGroupDiscoveryList"
}

// fillResponseKinds gives every resource and subresource a responseKind, as kube does, so that old
// client-go versions do not panic on a nil one.
func fillResponseKinds(resources []apidiscoveryv2.APIResourceDiscovery) {
	for i := range resources {
		if resources[i].ResponseKind == nil {
			resources[i].ResponseKind = &metav1.GroupVersionKind{}
		}
		for j := range resources[i].Subresources {
			if resources[i].Subresources[j].ResponseKind == nil {
				resources[i].Subresources[j].ResponseKind = &metav1.GroupVersionKind{}
			}
		}
	}
}

// toAggregated converts a legacy resource list to aggregated discovery's resources, as kube's
// ConvertGroupVersionIntoToDiscovery does: subresources go under their parent, which is made up
// when the list lacks it.
func toAggregated(list []metav1.APIResource) ([]apidiscoveryv2.APIResourceDiscovery, error) {
	var out []apidiscoveryv2.APIResourceDiscovery
	parents := map[string]int{}
	scope := func(r metav1.APIResource) apidiscoveryv2.ResourceScope {
		if r.Namespaced {
			return apidiscoveryv2.ScopeNamespace
		}
		return apidiscoveryv2.ScopeCluster
	}
	for _, r := range list {
		if strings.Contains(r.Name, "/") {
			continue
		}
		out = append(out, apidiscoveryv2.APIResourceDiscovery{
			Resource: r.Name, Scope: scope(r), SingularResource: r.SingularName,
			ResponseKind: &metav1.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind},
			Verbs:        r.Verbs, ShortNames: r.ShortNames, Categories: r.Categories,
		})
		parents[r.Name] = len(out) - 1
	}
	for _, r := range list {
		parent, sub, ok := strings.Cut(r.Name, "/")
		if !ok {
			continue
		}
		i, exists := parents[parent]
		if !exists {
			out = append(out, apidiscoveryv2.APIResourceDiscovery{Resource: parent, Scope: scope(r), ResponseKind: &metav1.GroupVersionKind{}})
			i = len(out) - 1
			parents[parent] = i
		}
		if out[i].Scope != scope(r) {
			return nil, fmt.Errorf("Error: Parent %s (scope: %s) and subresource %s (scope: %s) scope do not match", parent, out[i].Scope, sub, scope(r))
		}
		s := apidiscoveryv2.APISubresourceDiscovery{Subresource: sub, Verbs: r.Verbs, ResponseKind: &metav1.GroupVersionKind{}}
		if r.Kind != "" {
			s.ResponseKind = &metav1.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}
		}
		out[i].Subresources = append(out[i].Subresources, s)
	}
	return out, nil
}

// openAPIResult is a remote group version's OpenAPI as last fetched.
type openAPIResult struct {
	v2     []byte // JSON, limited to the group version's paths
	v2ETag string
	v3URL  string
}

// fetchOpenAPI fetches the server's /openapi/v2, keeping the group version's paths as kube's
// aggregator does, and what its /openapi/v3 index lists for the group version.
func fetchOpenAPI(ctx context.Context, h http.Handler, gv schema.GroupVersion, last *openAPIResult) (*openAPIResult, error) {
	out := &openAPIResult{}
	var etag string
	if last != nil {
		etag = last.v2ETag
	}
	rec, err := get(ctx, h, "/openapi/v2", "application/json", etag)
	if err != nil {
		return nil, err
	}
	switch rec.Code {
	case http.StatusNotModified:
		if last != nil {
			out.v2, out.v2ETag = last.v2, last.v2ETag
		}
	case http.StatusOK:
		var sw spec.Swagger
		if err := json.Unmarshal(rec.Body.Bytes(), &sw); err != nil {
			return nil, fmt.Errorf("reading the OpenAPI v2 of %s: %w", gv, err)
		}
		filtered := aggregator.FilterSpecByPathsWithoutSideEffects(&sw, []string{"/apis/" + gv.Group + "/" + gv.Version + "/"})
		if out.v2, err = json.Marshal(filtered); err != nil {
			return nil, fmt.Errorf("encoding the OpenAPI v2 of %s: %w", gv, err)
		}
		out.v2ETag = rec.Header().Get("ETag")
	case http.StatusNotFound:
		// a server without OpenAPI v2: nothing to merge
	default:
		return nil, fmt.Errorf("failed to download the OpenAPI v2 of %s: %d %s", gv, rec.Code, strings.TrimSpace(rec.Body.String()))
	}

	rec, err = get(ctx, h, "/openapi/v3", "application/json", "")
	if err != nil {
		return nil, err
	}
	switch rec.Code {
	case http.StatusOK:
		var index struct {
			Paths map[string]struct {
				ServerRelativeURL string `json:"serverRelativeURL"`
			} `json:"paths"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &index); err != nil {
			return nil, fmt.Errorf("reading the OpenAPI v3 index of %s: %w", gv, err)
		}
		out.v3URL = index.Paths["apis/"+gv.Group+"/"+gv.Version].ServerRelativeURL
	case http.StatusNotFound:
	default:
		return nil, fmt.Errorf("failed to download the OpenAPI v3 index of %s: %d %s", gv, rec.Code, strings.TrimSpace(rec.Body.String()))
	}
	return out, nil
}
