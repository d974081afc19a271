package routes

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apictl/apictl/pkg/routes/model"
)

// The model's types and verbs live in the leaf package model, where kinds declare themselves; these
// names keep them where the rest of the code knows them.
type (
	Resource      = model.Resource
	Subresource   = model.Subresource
	PrinterColumn = model.PrinterColumn
)

const (
	VerbGet              = model.VerbGet
	VerbList             = model.VerbList
	VerbWatch            = model.VerbWatch
	VerbCreate           = model.VerbCreate
	VerbUpdate           = model.VerbUpdate
	VerbPatch            = model.VerbPatch
	VerbDelete           = model.VerbDelete
	VerbDeleteCollection = model.VerbDeleteCollection

	ScopeNamespaced = model.ScopeNamespaced
	ScopeCluster    = model.ScopeCluster
)

// StandardVerbs returns the eight verbs of a resource with the full REST storage.
func StandardVerbs() []string { return model.StandardVerbs() }

// customResourceVerbs is the order in which kube's CRD discovery lists a custom resource's verbs
// (unsorted, unlike built-in resources); discovery documents repeat it byte for byte.
func customResourceVerbs() []string {
	return []string{VerbDelete, VerbDeleteCollection, VerbGet, VerbList, VerbPatch, VerbCreate, VerbUpdate, VerbWatch}
}

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

// StorageVersionHash is discovery's hash of a stored version (model.StorageVersionHash).
func StorageVersionHash(group, version, kind string) string {
	return model.StorageVersionHash(group, version, kind)
}
