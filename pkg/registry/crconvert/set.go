package crconvert

import (
	"errors"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apictl/apictl/pkg/routes"
)

// Set holds the converters of a set of CRDs by group and resource. Only CRDs with more than one version
// have one: a CRD with a single version stores and serves that version, so its objects never need
// converting, and its reads stay on the path that sends stored bytes as they are.
type Set struct {
	byResource map[schema.GroupResource]*Converter
}

// NewSet builds the converters of crds. Each problem is a *routes.CRDError naming the file and document
// of its CRD; all are returned joined, with the converters of the CRDs that built.
func (f *Factory) NewSet(crds []routes.CRD) (*Set, error) {
	set := &Set{byResource: map[schema.GroupResource]*Converter{}}
	var errs []error
	for _, c := range crds {
		d := c.Definition
		if len(d.Spec.Versions) < 2 {
			continue
		}
		conv, err := f.NewConverter(d)
		if err != nil {
			errs = append(errs, &routes.CRDError{File: c.File, Document: c.Document, Line: c.Line, Item: c.Item, Group: d.Spec.Group, Err: err})
			continue
		}
		set.byResource[schema.GroupResource{Group: d.Spec.Group, Resource: d.Spec.Names.Plural}] = conv
	}
	return set, errors.Join(errs...)
}

// For returns the converter of a custom resource; nil for resources whose objects need no converting
// (built-in resources and CRDs with one version). A nil Set holds nothing.
func (s *Set) For(gr schema.GroupResource) *Converter {
	if s == nil {
		return nil
	}
	return s.byResource[gr]
}
