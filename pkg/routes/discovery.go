package routes

import (
	"slices"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// DiscoveryOptions say what discovery needs from the server.
type DiscoveryOptions struct {
	// ServerAddress is host:port clients should use, published in /api's
	// serverAddressByClientCIDRs for 0.0.0.0/0. Empty publishes an empty list.
	ServerAddress string
}

// Discovery holds every discovery document of an API, built once. Marshalled with encoding/json the
// documents match kube's byte for byte where clients look: field order, sorted verbs for built-in
// resources, /api and /api/v1 without apiVersion.
type Discovery struct {
	// APIVersions is /api; nil when the core group is disabled.
	APIVersions *metav1.APIVersions
	// GroupList is /apis: every group but core, in discovery order.
	GroupList metav1.APIGroupList
	// Groups are /apis/<group>, by group name.
	Groups map[string]*metav1.APIGroup
	// ResourceLists are /api/v1 and /apis/<group>/<version>, by group version.
	ResourceLists map[schema.GroupVersion]*metav1.APIResourceList
	// AggregatedCore and AggregatedGroups answer /api and /apis for clients that accept
	// MediaAggregatedDiscovery.
	AggregatedCore   apidiscoveryv2.APIGroupDiscoveryList
	AggregatedGroups apidiscoveryv2.APIGroupDiscoveryList
}

// NewDiscovery builds the discovery documents of api.
func NewDiscovery(api *API, opts DiscoveryOptions) *Discovery {
	d := &Discovery{
		GroupList:        metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}, Groups: []metav1.APIGroup{}},
		Groups:           map[string]*metav1.APIGroup{},
		ResourceLists:    map[schema.GroupVersion]*metav1.APIResourceList{},
		AggregatedCore:   newAggregatedList(),
		AggregatedGroups: newAggregatedList(),
	}
	for _, g := range api.Groups() {
		var versions []metav1.GroupVersionForDiscovery
		var aggregated []apidiscoveryv2.APIVersionDiscovery
		for vi := range g.Versions {
			v := &g.Versions[vi]
			gv := schema.GroupVersion{Group: g.Name, Version: v.Name}
			versions = append(versions, metav1.GroupVersionForDiscovery{GroupVersion: gv.String(), Version: v.Name})
			list := &metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: gv.String()}
			if g.Name == GroupCore {
				// kube serves /api/v1 without apiVersion.
				list.APIVersion = ""
			}
			list.APIResources = apiResources(gv, v.Resources)
			d.ResourceLists[gv] = list
			aggregated = append(aggregated, apidiscoveryv2.APIVersionDiscovery{
				Version:   v.Name,
				Resources: aggregatedResources(gv, v.Resources),
				Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent,
			})
		}
		item := apidiscoveryv2.APIGroupDiscovery{ObjectMeta: metav1.ObjectMeta{Name: g.Name}, Versions: aggregated}
		if g.Name == GroupCore {
			names := make([]string, len(g.Versions))
			for i, v := range g.Versions {
				names[i] = v.Name
			}
			d.APIVersions = &metav1.APIVersions{
				TypeMeta:                   metav1.TypeMeta{Kind: "APIVersions"},
				Versions:                   names,
				ServerAddressByClientCIDRs: serverAddresses(opts.ServerAddress),
			}
			d.AggregatedCore.Items = append(d.AggregatedCore.Items, item)
			continue
		}
		group := metav1.APIGroup{Name: g.Name, Versions: versions, PreferredVersion: versions[0]}
		d.GroupList.Groups = append(d.GroupList.Groups, group)
		single := group
		single.TypeMeta = metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}
		d.Groups[g.Name] = &single
		d.AggregatedGroups.Items = append(d.AggregatedGroups.Items, item)
	}
	return d
}

// Document returns the legacy discovery document a discovery path serves (/api, /apis,
// /apis/<group>, /api/v1, /apis/<group>/<version>), for routes whose Endpoint is a discovery one.
func (d *Discovery) Document(r *Route) (any, bool) {
	switch r.Endpoint {
	case EndpointAPIVersions:
		return d.APIVersions, d.APIVersions != nil
	case EndpointAPIGroupList:
		return &d.GroupList, true
	case EndpointAPIGroup:
		g, ok := d.Groups[r.Group]
		return g, ok
	case EndpointAPIResourceList:
		l, ok := d.ResourceLists[r.GroupVersion()]
		return l, ok
	}
	return nil, false
}

// Aggregated returns the aggregated document for /api or /apis.
func (d *Discovery) Aggregated(r *Route) (*apidiscoveryv2.APIGroupDiscoveryList, bool) {
	switch r.Endpoint {
	case EndpointAPIVersions:
		return &d.AggregatedCore, true
	case EndpointAPIGroupList:
		return &d.AggregatedGroups, true
	}
	return nil, false
}

func newAggregatedList() apidiscoveryv2.APIGroupDiscoveryList {
	return apidiscoveryv2.APIGroupDiscoveryList{
		TypeMeta: metav1.TypeMeta{Kind: "APIGroupDiscoveryList", APIVersion: apidiscoveryv2.SchemeGroupVersion.String()},
		Items:    []apidiscoveryv2.APIGroupDiscovery{},
	}
}

func serverAddresses(addr string) []metav1.ServerAddressByClientCIDR {
	if addr == "" {
		return []metav1.ServerAddressByClientCIDR{}
	}
	return []metav1.ServerAddressByClientCIDR{{ClientCIDR: "0.0.0.0/0", ServerAddress: addr}}
}

// apiResources lists resources and subresources in storage-key order, as kube registers them.
// Custom resources list status before scale after their parent, as kube's CRD discovery does.
func apiResources(gv schema.GroupVersion, resources []Resource) []metav1.APIResource {
	out := make([]metav1.APIResource, 0, len(resources)*2)
	for ri := range resources {
		r := &resources[ri]
		out = append(out, metav1.APIResource{
			Name:               r.Plural,
			SingularName:       r.Singular,
			Namespaced:         r.Namespaced,
			Kind:               r.Kind,
			Verbs:              resourceVerbs(r),
			ShortNames:         r.ShortNames,
			Categories:         r.Categories,
			StorageVersionHash: r.StorageVersionHash,
		})
		for si := range subresourcesInDiscoveryOrder(r) {
			s := &r.Subresources[si]
			res := metav1.APIResource{
				Name:       r.Plural + "/" + s.Name,
				Namespaced: r.Namespaced,
				Kind:       s.Kind,
				Verbs:      subresourceVerbs(s),
			}
			if gvk := s.GroupVersionKind(gv); gvk.GroupVersion() != gv {
				res.Group, res.Version = gvk.Group, gvk.Version
			}
			out = append(out, res)
		}
	}
	if len(resources) > 0 && !resources[0].Custom {
		// Built-in resources are registered by sorted storage key, which interleaves a resource's
		// subresources with resources whose names extend it ("foo" < "foo-bar" < "foo/status").
		slices.SortStableFunc(out, func(a, b metav1.APIResource) int {
			switch {
			case a.Name < b.Name:
				return -1
			case a.Name > b.Name:
				return 1
			}
			return 0
		})
	}
	return out
}

// subresourcesInDiscoveryOrder yields subresource indexes: by name for built-in resources, status
// then scale then the rest for custom resources.
func subresourcesInDiscoveryOrder(r *Resource) func(yield func(int) bool) {
	return func(yield func(int) bool) {
		order := make([]int, len(r.Subresources))
		for i := range order {
			order[i] = i
		}
		if r.Custom {
			rank := func(name string) int {
				switch name {
				case "status":
					return 0
				case "scale":
					return 1
				}
				return 2
			}
			slices.SortStableFunc(order, func(a, b int) int { return rank(r.Subresources[a].Name) - rank(r.Subresources[b].Name) })
		}
		for _, i := range order {
			if !yield(i) {
				return
			}
		}
	}
}

func aggregatedResources(gv schema.GroupVersion, resources []Resource) []apidiscoveryv2.APIResourceDiscovery {
	out := make([]apidiscoveryv2.APIResourceDiscovery, 0, len(resources))
	for ri := range resources {
		r := &resources[ri]
		scope := apidiscoveryv2.ScopeCluster
		if r.Namespaced {
			scope = apidiscoveryv2.ScopeNamespace
		}
		res := apidiscoveryv2.APIResourceDiscovery{
			Resource:         r.Plural,
			ResponseKind:     responseKind(r, gv, gv.WithKind(r.Kind)),
			Scope:            scope,
			SingularResource: r.Singular,
			Verbs:            resourceVerbs(r),
			ShortNames:       r.ShortNames,
			Categories:       r.Categories,
		}
		for si := range subresourcesInDiscoveryOrder(r) {
			s := &r.Subresources[si]
			gvk := s.GroupVersionKind(gv)
			res.Subresources = append(res.Subresources, apidiscoveryv2.APISubresourceDiscovery{
				Subresource:  s.Name,
				ResponseKind: responseKind(r, gv, gvk),
				Verbs:        subresourceVerbs(s),
			})
		}
		out = append(out, res)
	}
	return out
}

// resourceVerbs are the discovery verbs of a resource: sorted for built-in resources, in kube's
// fixed CRD order for custom resources.
func resourceVerbs(r *Resource) metav1.Verbs {
	if r.Custom {
		var out metav1.Verbs
		for _, v := range customResourceVerbs() {
			if r.HasVerb(v) {
				out = append(out, v)
			}
		}
		return out
	}
	out := slices.Clone(r.Verbs)
	slices.Sort(out)
	return out
}

// subresourceVerbs are the sorted discovery verbs of a subresource; a connect subresource lists the
// verbs of its HTTP methods.
func subresourceVerbs(s *Subresource) metav1.Verbs {
	set := map[string]bool{}
	for _, v := range s.Verbs {
		set[v] = true
	}
	for _, m := range s.ConnectMethods {
		if v := discoveryVerb(ActionConnect, m); v != "" {
			set[v] = true
		}
	}
	out := make(metav1.Verbs, 0, len(set))
	for v := range set {
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}

// responseKind is the kind a resource or subresource of r answers with, as kube's aggregated
// discovery writes it: for built-in resources the group and version are left empty when they are
// the group version's own (kube converts them from the legacy APIResource, which omits them), and
// given when they differ (serviceaccounts/token is an authentication.k8s.io/v1 TokenRequest); custom
// resources always name them.
func responseKind(r *Resource, gv schema.GroupVersion, gvk schema.GroupVersionKind) *metav1.GroupVersionKind {
	if !r.Custom && gvk.GroupVersion() == gv {
		return &metav1.GroupVersionKind{Kind: gvk.Kind}
	}
	return &metav1.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind}
}
