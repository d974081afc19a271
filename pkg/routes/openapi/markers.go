package openapi

import "k8s.io/kube-openapi/pkg/validation/spec"

// extMapType is kube's x-kubernetes-map-type: "atomic" for a map or struct that is one value.
const extMapType = "x-kubernetes-map-type"

// marker is what kube's +listType, +listMapKey, +mapType and +required comment markers put in a
// definition, which the Go types of k8s.io/api do not carry in their struct tags: reflection cannot
// see them, and server-side apply needs them (a Service's ports are keyed by port and protocol, its
// selector is one value).
type marker struct {
	// mapType is the definition's own x-kubernetes-map-type.
	mapType string
	// required, when set, replaces the required fields reflection found.
	required []string
	// fields are the extensions of properties, by property name.
	fields map[string]fieldMarker
}

type fieldMarker struct {
	listType string
	mapKeys  []string
	mapType  string
}

// kubeMarkers are the markers of the definitions the built-in resources use that reflection and
// the patch tags do not imply (addTagExtensions): the atomic structs and maps, and the lists whose
// type differs from what their patch tags say, as kube-apiserver v1.37.2's OpenAPI publishes them.
// TestMarkersAreKubes holds them to kube's field-manager schema, and TestPublishedMarkers to
// kube's OpenAPI.
var kubeMarkers = map[string]marker{
	// Objects that refer to others are one value each (+structType=atomic).
	"io.k8s.api.core.v1.ObjectReference":                  {mapType: "atomic"},
	"io.k8s.api.core.v1.LocalObjectReference":             {mapType: "atomic"},
	"io.k8s.api.rbac.v1.RoleRef":                          {mapType: "atomic"},
	"io.k8s.api.rbac.v1.Subject":                          {mapType: "atomic"},
	"io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference": {mapType: "atomic"},

	"io.k8s.api.core.v1.ServiceSpec": {fields: map[string]fieldMarker{
		"ports":    {listType: "map", mapKeys: []string{"port", "protocol"}},
		"selector": {mapType: "atomic"},
	}},
	"io.k8s.api.core.v1.EndpointAddress":    {mapType: "atomic"},
	"io.k8s.api.core.v1.EndpointPort":       {mapType: "atomic"},
	"io.k8s.api.discovery.v1.EndpointSlice": {required: []string{"addressType"}},
	"io.k8s.api.discovery.v1.Endpoint":      {fields: map[string]fieldMarker{"addresses": {listType: "set"}}},
	"io.k8s.api.discovery.v1.EndpointPort":  {mapType: "atomic"},
	// The selectors of webhooks (admissionregistration.k8s.io) are one value each.
	"io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector": {mapType: "atomic"},
}

// applyMarkers adds kube's markers to the reflected definition name.
func applyMarkers(name string, s *spec.Schema) {
	m, ok := kubeMarkers[name]
	if !ok {
		return
	}
	if m.mapType != "" {
		s.AddExtension(extMapType, m.mapType)
	}
	if m.required != nil {
		s.Required = m.required
	}
	for field, fm := range m.fields {
		p, ok := s.Properties[field]
		if !ok {
			continue
		}
		if fm.listType != "" {
			p.AddExtension(extListType, fm.listType)
			// Keys the patch tags implied belong to the list type this one replaces.
			delete(p.Extensions, extListMapKeys)
		}
		if fm.mapKeys != nil {
			keys := make([]any, len(fm.mapKeys))
			for i, k := range fm.mapKeys {
				keys[i] = k
			}
			p.AddExtension(extListMapKeys, keys)
		}
		if fm.mapType != "" {
			p.AddExtension(extMapType, fm.mapType)
		}
		s.Properties[field] = p
	}
}
