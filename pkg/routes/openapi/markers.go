package openapi

import (
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/applyconfigurations"
	clientscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/kube-openapi/pkg/validation/spec"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
)

// extMapType is kube's x-kubernetes-map-type: "atomic" for a map or struct that is one value.
const extMapType = "x-kubernetes-map-type"

// marker is what kube-apiserver's OpenAPI publishes for a definition that neither reflection nor
// kube's field-manager schema tells.
type marker struct {
	// required, when set, replaces the required fields reflection found: the schema has no
	// required fields, and kube's +required markers live in comments reflection cannot see.
	required []string
}

// kubeMarkers are what kube-apiserver v1.37.2's OpenAPI publishes for the definitions of the
// built-in resources beyond reflection, the patch tags (addTagExtensions) and kube's field-manager
// schema (applySchemaMarkers), so a new built-in kind needs an entry here only where kube's OpenAPI
// and its field-manager schema disagree. TestPublishedMarkers holds the markers to kube's OpenAPI,
// TestServiceMarkers the required fields.
var kubeMarkers = map[string]marker{
	"io.k8s.api.discovery.v1.EndpointSlice": {required: []string{"addressType"}},
}

// kubeFieldSchema is the structured-merge-diff schema kube's field manager uses for the types of
// k8s.io/api and apimachinery: client-go keeps it, generated from kube-apiserver's own OpenAPI
// models, for its apply configurations, and it comes out of client-go's type converter through a
// typed object, the one door client-go opens to it. It holds kube's +listType, +listMapKey,
// +mapType and +structType markers, which live in comments reflection cannot see. Parsing it takes
// a while, so it is parsed once, and never changed after.
var kubeFieldSchema = sync.OnceValues(func() (*smdschema.Schema, error) {
	tc := applyconfigurations.NewTypeConverter(clientscheme.Scheme)
	cm := &corev1.ConfigMap{}
	cm.APIVersion, cm.Kind = "v1", "ConfigMap"
	tv, err := tc.ObjectToTyped(cm)
	if err != nil {
		return nil, fmt.Errorf("reading kube's field-manager schema from client-go: %w", err)
	}
	return tv.Schema(), nil
})

// applySchemaMarkers gives the reflected definition name the map and list markers kube's
// field-manager schema has for it: an atomic or granular struct, and per property the list type
// and keys of a list and the map type of a map or reference. A list kube's schema calls atomic
// only replaces a list type reflection found: kube's schema calls every list without a marker
// atomic, and kube publishes the items of List kinds without one.
func applySchemaMarkers(kube *smdschema.Schema, name string, s *spec.Schema) {
	t, ok := kube.FindNamedType(name)
	if !ok || t.Map == nil {
		return
	}
	if mt := mapType(t.Map.ElementRelationship); mt != "" {
		s.AddExtension(extMapType, mt)
	}
	for _, f := range t.Map.Fields {
		p, ok := s.Properties[f.Name]
		if !ok {
			continue
		}
		if f.Type.ElementRelationship != nil {
			if mt := mapType(*f.Type.ElementRelationship); mt != "" {
				p.AddExtension(extMapType, mt)
			}
		}
		switch a := f.Type.Inlined; {
		case a.List != nil:
			setListType(&p, a.List)
		case a.Map != nil:
			if mt := mapType(a.Map.ElementRelationship); mt != "" {
				p.AddExtension(extMapType, mt)
			}
		}
		s.Properties[f.Name] = p
	}
}

// mapType is the x-kubernetes-map-type of a map relationship, "" for the default.
func mapType(r smdschema.ElementRelationship) string {
	switch r {
	case smdschema.Atomic:
		return "atomic"
	case smdschema.Separable:
		return "granular"
	}
	return ""
}

// setListType sets the list type and keys of property p to those of kube's list l.
func setListType(p *spec.Schema, l *smdschema.List) {
	_, had := p.Extensions.GetString(extListType)
	listType := "atomic"
	switch {
	case l.ElementRelationship == smdschema.Associative && len(l.Keys) > 0:
		listType = "map"
	case l.ElementRelationship == smdschema.Associative:
		listType = "set"
	case !had:
		return
	}
	p.AddExtension(extListType, listType)
	delete(p.Extensions, extListMapKeys)
	if listType == "map" {
		keys := make([]any, len(l.Keys))
		for i, k := range l.Keys {
			keys[i] = k
		}
		p.AddExtension(extListMapKeys, keys)
	}
}

// applyMarkers adds kubeMarkers to the reflected definition name.
func applyMarkers(name string, s *spec.Schema) {
	m, ok := kubeMarkers[name]
	if !ok {
		return
	}
	if m.required != nil {
		s.Required = m.required
	}
}
