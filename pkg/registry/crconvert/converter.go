package crconvert

import (
	"bytes"
	"errors"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/conversion"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	sigsjson "sigs.k8s.io/json"
)

// Factory makes the converters of CRDs. It holds kube's webhook client manager, whose clients are
// cached by client config, so make one Factory per server and keep it while CRDs come and go.
type Factory struct {
	kube *conversion.CRConverterFactory
}

// NewFactory returns a Factory whose webhooks are reached by clientConfig.url only.
func NewFactory() (*Factory, error) {
	f, err := conversion.NewCRConverterFactory(refuseServices{}, nil)
	if err != nil {
		return nil, fmt.Errorf("building the conversion webhook clients: %w", err)
	}
	return &Factory{kube: f}, nil
}

// Converter converts the objects of one CRD between its versions. It is safe for concurrent use.
type Converter struct {
	group, kind string
	storage     string
	webhook     bool
	// unsafe is kube's converter, which may change the objects it is given: Decode gives it only
	// objects it decoded itself. safe copies them first.
	unsafe, safe runtime.ObjectConvertor
	// schemas are the structural schemas of every version, defaults pruned, for the coercion kube's
	// storage codec does around a conversion.
	schemas map[string]*structuralschema.Structural
	// prefixes are how a stored object at each version begins (see AtVersion).
	prefixes map[string][]byte
}

// NewConverter builds the converter of a CRD that passed kube's CRD validation: every version has a
// structural schema and exactly one is the storage version. A CRD without spec.conversion converts
// with strategy None, as kube defaults it.
func (f *Factory) NewConverter(crd *apiextensionsv1.CustomResourceDefinition) (*Converter, error) {
	if crd.Spec.Conversion == nil {
		c := *crd
		c.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}
		crd = &c
	}
	if crd.Spec.Conversion.Strategy == apiextensionsv1.WebhookConverter && crd.Spec.Conversion.Webhook == nil {
		return nil, fmt.Errorf("CRD %s: spec.conversion.webhook is required for strategy Webhook", crd.Name)
	}
	c := &Converter{
		group:    crd.Spec.Group,
		kind:     crd.Spec.Names.Kind,
		webhook:  crd.Spec.Conversion.Strategy == apiextensionsv1.WebhookConverter,
		schemas:  map[string]*structuralschema.Structural{},
		prefixes: map[string][]byte{},
	}
	for i := range crd.Spec.Versions {
		v := &crd.Spec.Versions[i]
		if v.Storage {
			c.storage = v.Name
		}
		gv := schema.GroupVersion{Group: crd.Spec.Group, Version: v.Name}.String()
		c.prefixes[v.Name] = []byte(`{"apiVersion":"` + gv + `"`)
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue // no pruning at this version: kube requires a schema, routes' CRD checks too
		}
		s, err := structuralOf(v.Schema.OpenAPIV3Schema)
		if err != nil {
			return nil, fmt.Errorf("CRD %s: the schema of version %s: %w", crd.Name, v.Name, err)
		}
		c.schemas[v.Name] = s
	}
	if c.storage == "" {
		return nil, fmt.Errorf("CRD %s has no storage version", crd.Name)
	}
	safe, unsafe, err := f.kube.NewConverter(crd)
	if err != nil {
		return nil, fmt.Errorf("CRD %s: building its converter: %w", crd.Name, err)
	}
	c.safe, c.unsafe = safe, unsafe
	return c, nil
}

// StorageVersion is the version objects are stored at.
func (c *Converter) StorageVersion() string { return c.storage }

// Webhook reports whether the CRD converts through a webhook (strategy Webhook).
func (c *Converter) Webhook() bool { return c.webhook }

// AtVersion reports, without decoding it, whether a stored object is known to be at version: the
// stored form is encoding/json's encoding of a map, whose keys come sorted, so apiVersion comes first
// unless the schema has a top-level field that sorts before it. false means "decode to know"; Decode
// converts only what needs it.
func (c *Converter) AtVersion(value []byte, version string) bool {
	p, ok := c.prefixes[version]
	return ok && bytes.HasPrefix(value, p)
}

// Error is a failure to convert stored objects: Index is the position, in the values given to Decode,
// of an object that could not be converted (the first one sent, when a batch failed as a whole).
type Error struct {
	Index int
	Err   error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Decode decodes stored objects and returns them at version, as kube's storage codec reads custom
// resources: each is pruned, repaired (metadata fields of the wrong type dropped, a missing generation
// set to 1) and defaulted at its own version; those at another version are converted, all in one call
// (one ConversionReview), and pruned to the schema of version. A failed conversion is an *Error.
func (c *Converter) Decode(values [][]byte, version string) ([]*unstructured.Unstructured, error) {
	objs := make([]*unstructured.Unstructured, len(values))
	var convert []int
	target := schema.GroupVersion{Group: c.group, Version: version}.String()
	for i, value := range values {
		content := map[string]any{}
		if err := sigsjson.UnmarshalCaseSensitivePreserveInts(value, &content); err != nil {
			return nil, &Error{Index: i, Err: fmt.Errorf("decoding a stored %s: %w", c.kind, err)}
		}
		u := &unstructured.Unstructured{Object: content}
		if err := c.coerce(u, true); err != nil {
			return nil, &Error{Index: i, Err: err}
		}
		c.applyDefaults(u)
		objs[i] = u
		if u.GetAPIVersion() != target {
			convert = append(convert, i)
		}
	}
	if len(convert) == 0 {
		return objs, nil
	}
	converted, err := c.convertMany(objs, convert, version)
	if err != nil {
		return nil, &Error{Index: convert[0], Err: err}
	}
	for n, i := range convert {
		u := converted[n]
		if err := c.coerce(u, false); err != nil {
			return nil, &Error{Index: i, Err: err}
		}
		objs[i] = u
	}
	return objs, nil
}

// ToStorage returns obj, an object of a write at any version of the CRD, at the storage version,
// pruned to its schema: what kube's storage codec encodes. obj itself is not changed; an object already
// at the storage version is returned as it is.
func (c *Converter) ToStorage(obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	return c.Convert(obj, c.storage)
}

// Convert returns obj at version, pruned to its schema, leaving obj unchanged; an object already at
// version is returned as it is.
func (c *Converter) Convert(obj *unstructured.Unstructured, version string) (*unstructured.Unstructured, error) {
	gv := schema.GroupVersion{Group: c.group, Version: version}
	if obj.GetAPIVersion() == gv.String() {
		return obj, nil
	}
	out, err := c.safe.ConvertToVersion(obj, gv)
	if err != nil {
		return nil, err
	}
	u, ok := out.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("converting a %s: the converter returned a %T", c.kind, out)
	}
	if err := c.coerce(u, false); err != nil {
		return nil, err
	}
	return u, nil
}

// convertMany converts objs[i] for each i in which (all not at version) in one call to kube's
// converter: a list, as kube's CR storage hands lists over, so that a webhook gets them in one
// ConversionReview. The list carries the first object's apiVersion and kind, so that an error names the
// object's kind and version as kube's errors for one object do.
func (c *Converter) convertMany(objs []*unstructured.Unstructured, which []int, version string) ([]*unstructured.Unstructured, error) {
	gv := schema.GroupVersion{Group: c.group, Version: version}
	if len(which) == 1 {
		out, err := c.unsafe.ConvertToVersion(objs[which[0]], gv)
		if err != nil {
			return nil, err
		}
		u, ok := out.(*unstructured.Unstructured)
		if !ok {
			return nil, fmt.Errorf("converting a %s: the converter returned a %T", c.kind, out)
		}
		return []*unstructured.Unstructured{u}, nil
	}
	first := objs[which[0]]
	list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": first.GetAPIVersion(), "kind": first.GetKind()},
		Items: make([]unstructured.Unstructured, len(which))}
	for n, i := range which {
		list.Items[n] = *objs[i]
	}
	out, err := c.unsafe.ConvertToVersion(list, gv)
	if err != nil {
		return nil, err
	}
	converted, ok := out.(*unstructured.UnstructuredList)
	if !ok {
		return nil, fmt.Errorf("converting a list of %s: the converter returned a %T", c.kind, out)
	}
	if len(converted.Items) != len(which) {
		return nil, errors.New("converting a list of " + c.kind + ": the converter changed the number of items")
	}
	res := make([]*unstructured.Unstructured, len(which))
	for n := range converted.Items {
		res[n] = &converted.Items[n]
	}
	return res, nil
}
