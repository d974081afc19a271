// Package model holds the types of apictl's API model that a kind describes itself with: a resource,
// its subresources and its printer columns, with the verbs and scopes they name. It is a leaf, so
// that each kind's package (pkg/kinds/...) can declare its route-model entry and pkg/routes can
// gather them without an import cycle; pkg/routes re-exports every name.
package model

import (
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

// Scopes of a resource, spelled as CRDs and aggregated discovery spell them.
const (
	ScopeNamespaced = "Namespaced"
	ScopeCluster    = "Cluster"
)

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
