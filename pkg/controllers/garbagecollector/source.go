package garbagecollector

import (
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apictl/apictl/pkg/routes"
	"github.com/apictl/apictl/pkg/storage"
)

// Resource is one resource whose objects the collector follows.
type Resource struct {
	// Resource is named with its preferred version: the apiVersion its objects are seen as.
	Resource   schema.GroupVersionResource
	Kind       string
	Namespaced bool
	// Store is the resource's watch cache; Prefix is where its objects are stored.
	Store  storage.Store
	Prefix string
}

// Snapshot is what the server serves at one moment.
type Snapshot struct {
	// API resolves owner references to resources.
	API *routes.API
	// Resources are the resources to follow.
	Resources []Resource
	// Changed is closed once a later snapshot differs.
	Changed <-chan struct{}
}

// Source is where the collector learns what the server serves: the built-in resources, and the
// custom resources as CRDs come and go.
type Source interface {
	Snapshot() Snapshot
}

// ignored are the resources kube's collector does not follow: events are many and never owners.
var ignored = []schema.GroupResource{{Group: "", Resource: "events"}, {Group: "events.k8s.io", Resource: "events"}}

// Resources lists the resources of api that the collector follows, as kube's GetDeletableResources
// chooses them: each resource in its preferred version, when it supports delete, list and watch and
// is stored (stores returns its watch cache).
func Resources(api *routes.API, stores func(schema.GroupResource) (storage.Store, bool)) []Resource {
	var out []Resource
	seen := map[schema.GroupResource]bool{}
	for _, g := range api.Groups() {
		for _, v := range g.Versions {
			for _, r := range v.Resources {
				gr := schema.GroupResource{Group: g.Name, Resource: r.Plural}
				if seen[gr] {
					continue // the first version holding it is the preferred one
				}
				seen[gr] = true
				if slices.Contains(ignored, gr) || !hasVerbs(r.Verbs, routes.VerbDelete, routes.VerbList, routes.VerbWatch) {
					continue
				}
				store, ok := stores(gr)
				if !ok {
					continue
				}
				out = append(out, Resource{Resource: gr.WithVersion(v.Name), Kind: r.Kind, Namespaced: r.Namespaced,
					Store: store, Prefix: storage.ResourcePrefix(g.Name, r.Plural, "")})
			}
		}
	}
	return out
}

func hasVerbs(verbs []string, want ...string) bool {
	for _, w := range want {
		if !slices.Contains(verbs, w) {
			return false
		}
	}
	return true
}

// mapping is where the objects of one kind are served.
type mapping struct {
	resource   schema.GroupVersionResource
	namespaced bool
	custom     bool
}

// mapper resolves an owner reference's apiVersion and kind, as kube's REST mapper does: the kind
// must be served in that very version.
type mapper struct {
	byKind map[schema.GroupVersionKind]mapping
}

func newMapper(api *routes.API) *mapper {
	m := &mapper{byKind: map[schema.GroupVersionKind]mapping{}}
	if api == nil {
		return m
	}
	for _, g := range api.Groups() {
		for _, v := range g.Versions {
			for _, r := range v.Resources {
				gvk := schema.GroupVersionKind{Group: g.Name, Version: v.Name, Kind: r.Kind}
				if _, dup := m.byKind[gvk]; dup {
					continue
				}
				m.byKind[gvk] = mapping{resource: schema.GroupVersionResource{Group: g.Name, Version: v.Name, Resource: r.Plural},
					namespaced: r.Namespaced, custom: r.Custom}
			}
		}
	}
	return m
}

// restMappingError says that a reference names a kind the server does not serve (yet: a CRD may
// be on its way), kube's restMappingError.
type restMappingError struct{ kind, apiVersion string }

func (e *restMappingError) Error() string {
	return "unable to get REST mapping for " + e.apiVersion + "/" + e.kind + "."
}

func (m *mapper) resource(apiVersion, kind string) (mapping, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return mapping{}, &restMappingError{kind: kind, apiVersion: apiVersion}
	}
	mp, ok := m.byKind[gv.WithKind(kind)]
	if !ok {
		return mapping{}, &restMappingError{kind: kind, apiVersion: apiVersion}
	}
	return mp, nil
}
