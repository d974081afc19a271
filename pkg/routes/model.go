package routes

import (
	"encoding/json"
	"reflect"
	"slices"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The verbs discovery lists for resources. A resource supports a subset; the installer turns each
// into the routes kube's installer makes for it.
const (
	VerbGet              = "get"
	VerbList             = "list"
	VerbWatch            = "watch"
	VerbCreate           = "create"
	VerbUpdate           = "update"
	VerbPatch            = "patch"
	VerbDelete           = "delete"
	VerbDeleteCollection = "deletecollection"
)

// StandardVerbs returns the eight verbs of a resource with the full REST storage, sorted as
// discovery lists them for built-in resources.
func StandardVerbs() []string {
	return []string{VerbCreate, VerbDelete, VerbDeleteCollection, VerbGet, VerbList, VerbPatch, VerbUpdate, VerbWatch}
}

// customResourceVerbs is the order in which kube's CRD discovery lists a custom resource's verbs
// (unsorted, unlike built-in resources); discovery documents repeat it byte for byte.
func customResourceVerbs() []string {
	return []string{VerbDelete, VerbDeleteCollection, VerbGet, VerbList, VerbPatch, VerbCreate, VerbUpdate, VerbWatch}
}

// Scopes of a resource, spelled as CRDs and aggregated discovery spell them.
const (
	ScopeNamespaced = "Namespaced"
	ScopeCluster    = "Cluster"
)

// Group is an API group and the versions the server offers of it.
type Group struct {
	// Name is the group; "" is the core group, served under /api.
	Name string `json:"name"`
	// Versions are in preference order: the first is the preferred version.
	Versions []Version `json:"versions"`
}

// Version is one version of a group and the resources it serves.
type Version struct {
	Name      string     `json:"name"`
	Resources []Resource `json:"resources"`
}

// Resource is one REST resource of a group version.
type Resource struct {
	// Plural is the resource name in paths: configmaps.
	Plural string `json:"plural"`
	// Singular is the lower-case singular name: configmap.
	Singular string `json:"singular"`
	// Kind and ListKind name the objects: ConfigMap, ConfigMapList.
	Kind     string `json:"kind"`
	ListKind string `json:"listKind"`
	// Namespaced resources live in a namespace; the others are cluster-scoped.
	Namespaced bool `json:"namespaced"`
	// Verbs are the discovery verbs the resource supports (VerbGet, ...).
	Verbs []string `json:"verbs"`
	// Subresources such as status and scale.
	Subresources []Subresource `json:"subresources,omitempty"`
	// ShortNames (cm) and Categories (all) as kubectl uses them.
	ShortNames []string `json:"shortNames,omitempty"`
	Categories []string `json:"categories,omitempty"`
	// PrinterColumns are the columns of the resource's Table, in order, starting with Name.
	PrinterColumns []PrinterColumn `json:"printerColumns,omitempty"`
	// StorageVersionHash is discovery's hash of the version the objects are stored in (see
	// StorageVersionHash); empty if unknown.
	StorageVersionHash string `json:"storageVersionHash,omitempty"`
	// StoredAs names the resource whose stored objects this one serves, converted, when it has none of
	// its own: kube's cohabitating resources (events.k8s.io/v1 events are core v1 events, one object
	// seen through both APIs). Nil for most resources.
	StoredAs *schema.GroupVersionResource `json:"storedAs,omitempty"`
	// Custom is true for resources declared by a CustomResourceDefinition. They take no strategic
	// merge patch and their objects carry apiVersion and kind in lists.
	Custom bool `json:"custom,omitempty"`
	// Schema is a custom resource's openAPIV3Schema for this version; nil for built-in resources.
	Schema *apiextensionsv1.JSONSchemaProps `json:"schema,omitempty"`
	// SelectableFields are the fields a custom resource's lists and watches may select by besides
	// metadata.name and metadata.namespace (the CRD's selectableFields, without the leading dot).
	SelectableFields []string `json:"selectableFields,omitempty"`
	// Deprecated versions of custom resources answer with a warning.
	Deprecated         bool   `json:"deprecated,omitempty"`
	DeprecationWarning string `json:"deprecationWarning,omitempty"`
	// GoType and ListGoType are the k8s.io/api Go types of a built-in resource's objects; nil for
	// custom and discovered resources. OpenAPI schemas are derived from them, and strategic merge
	// patch needs them.
	GoType     reflect.Type `json:"-"`
	ListGoType reflect.Type `json:"-"`
}

// Subresource is a path below an object, such as namespaces/{name}/status.
type Subresource struct {
	// Name is the path segment: status, scale, finalize.
	Name string `json:"name"`
	// Group, Version and Kind name the objects the subresource reads and writes. Group and Version
	// are empty when they are the parent's; scale's are autoscaling/v1 Scale.
	Group   string `json:"group,omitempty"`
	Version string `json:"version,omitempty"`
	Kind    string `json:"kind"`
	// Verbs the subresource supports, as for resources.
	Verbs []string `json:"verbs,omitempty"`
	// ConnectMethods are the HTTP methods of a connect subresource (pods/exec); each becomes a
	// CONNECT route. ConnectSubpath adds the {path:*} routes (pods/proxy).
	ConnectMethods []string `json:"connectMethods,omitempty"`
	ConnectSubpath bool     `json:"connectSubpath,omitempty"`
	// GoType is the Go type of the subresource's objects for built-in resources.
	GoType reflect.Type `json:"-"`
}

// PrinterColumn is one column of a resource's Table, as a CRD's additionalPrinterColumns declare
// them. JSONPath is empty for the columns of built-in resources that kube computes in code (a
// ConfigMap's DATA counts its keys, a RoleBinding's ROLE joins kind and name).
type PrinterColumn struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Format      string `json:"format,omitempty"`
	Description string `json:"description,omitempty"`
	Priority    int32  `json:"priority,omitempty"`
	JSONPath    string `json:"jsonPath,omitempty"`
}

// API is the enabled API of a server: its groups in discovery order, core first. It is immutable
// once built and safe for concurrent use; build it with NewAPI, Builtin, LoadAPI or FromDiscovery.
type API struct {
	groups []Group
	index  map[resourceKey]*Resource
}

type resourceKey struct{ group, version, resource string }

// NewAPI validates groups and indexes them for lookup. The API takes ownership of the slices: do
// not change them afterwards. Within each version resources are sorted by name, subresources by
// name, as kube registers them.
func NewAPI(groups []Group) (*API, error) {
	if err := Validate(groups); err != nil {
		return nil, err
	}
	return newAPI(groups), nil
}

// newAPI indexes groups that are known to be valid.
func newAPI(groups []Group) *API {
	a := &API{groups: groups, index: map[resourceKey]*Resource{}}
	for gi := range groups {
		g := &groups[gi]
		for vi := range g.Versions {
			v := &g.Versions[vi]
			sortResources(v.Resources)
			for ri := range v.Resources {
				r := &v.Resources[ri]
				a.index[resourceKey{g.Name, v.Name, r.Plural}] = r
			}
		}
	}
	return a
}

// Groups returns the groups in discovery order. The slice is shared: do not modify it.
func (a *API) Groups() []Group { return a.groups }

// Group returns the named group.
func (a *API) Group(name string) (*Group, bool) {
	for i := range a.groups {
		if a.groups[i].Name == name {
			return &a.groups[i], true
		}
	}
	return nil, false
}

// Resource looks up a resource by group, version and plural name in constant time, without
// allocating: handlers call it on every request.
func (a *API) Resource(group, version, resource string) (*Resource, bool) {
	r, ok := a.index[resourceKey{group, version, resource}]
	return r, ok
}

// GroupVersions lists every group version in discovery order.
func (a *API) GroupVersions() []schema.GroupVersion {
	var out []schema.GroupVersion
	for _, g := range a.groups {
		for _, v := range g.Versions {
			out = append(out, schema.GroupVersion{Group: g.Name, Version: v.Name})
		}
	}
	return out
}

// MarshalJSON prints the groups, so that the model can be inspected as JSON or YAML.
func (a *API) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Groups []Group `json:"groups"`
	}{a.groups})
}

// Subresource returns the named subresource.
func (r *Resource) Subresource(name string) (*Subresource, bool) {
	for i := range r.Subresources {
		if r.Subresources[i].Name == name {
			return &r.Subresources[i], true
		}
	}
	return nil, false
}

// Scope is ScopeNamespaced or ScopeCluster.
func (r *Resource) Scope() string {
	if r.Namespaced {
		return ScopeNamespaced
	}
	return ScopeCluster
}

// HasVerb reports whether the resource supports verb.
func (r *Resource) HasVerb(verb string) bool { return slices.Contains(r.Verbs, verb) }

// CreateOnly reports whether the resource takes creates and nothing else: its objects are not stored
// but answered (kube's review APIs, whose REST storage implements only Create). Such a resource gets no
// storage, no watch cache, no registry rules, no table printer, no storageVersionHash, and the
// namespace controller has nothing of it to delete. It is derived from the verbs, so that resources
// read from a live server's discovery are recognized too.
func (r *Resource) CreateOnly() bool { return len(r.Verbs) == 1 && r.Verbs[0] == VerbCreate }

// GroupVersionKind returns the subresource's kind, filling in the parent's group and version when
// the subresource has none of its own.
func (s *Subresource) GroupVersionKind(parent schema.GroupVersion) schema.GroupVersionKind {
	if s.Group == "" && s.Version == "" {
		return parent.WithKind(s.Kind)
	}
	return schema.GroupVersionKind{Group: s.Group, Version: s.Version, Kind: s.Kind}
}
