package crschema

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"
)

// metaFields are the fields of an object (the root, or an embedded resource) that kube handles as
// TypeMeta and ObjectMeta rather than by the schema.
func isMetaField(k string) bool { return k == "apiVersion" || k == "kind" || k == "metadata" }

// checkDefaults rejects what kube rejects in a CRD's defaults: a default with fields the schema would
// prune, or one that does not validate against the schema it is the default of. Defaults inside
// metadata are left alone (kube coerces them as ObjectMeta). Like kube, defaults under
// additionalProperties are not checked.
func checkDefaults(root *structuralschema.Structural, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	var walk func(s *structuralschema.Structural, path *field.Path, isObjectRoot, insideMeta bool)
	walk = func(s *structuralschema.Structural, path *field.Path, isObjectRoot, insideMeta bool) {
		if s == nil {
			return
		}
		embedded := isObjectRoot || s.XEmbeddedResource
		if s.XEmbeddedResource {
			insideMeta = false
		}
		if d := s.Default.Object; d != nil && !insideMeta {
			pruned := runtime.DeepCopyJSONValue(d)
			pruning.Prune(pruned, s, s.XEmbeddedResource)
			if !reflect.DeepEqual(pruned, d) {
				errs = append(errs, field.Invalid(path.Child("default"), d, "must not have unknown fields"))
			} else if e := validateEmbedded(context.Background(), path.Child("default"), d, embeddedTree(s)); len(e) > 0 {
				errs = append(errs, e...)
			} else {
				res := validate.NewSchemaValidator(toOpenAPI(s), nil, "", strfmt.Default).Validate(d)
				errs = append(errs, fieldErrors(path.Child("default"), res)...)
			}
		}
		walk(s.Items, path.Child("items"), false, insideMeta)
		for _, k := range sortedKeys(s.Properties) {
			p := s.Properties[k]
			walk(&p, path.Child("properties").Key(k), false, insideMeta || (embedded && isMetaField(k)))
		}
	}
	walk(root, path, true, false)
	return errs
}

// pruneDefaults removes from every default what pruning would remove from an object (kube serves
// pruned defaults), leaving defaults inside metadata alone.
func pruneDefaults(s *structuralschema.Structural, isObjectRoot, insideMeta bool) {
	if s == nil {
		return
	}
	embedded := isObjectRoot || s.XEmbeddedResource
	if s.XEmbeddedResource {
		insideMeta = false
	}
	if s.Default.Object != nil && !insideMeta {
		pruning.Prune(s.Default.Object, s, s.XEmbeddedResource)
	}
	if s.AdditionalProperties != nil {
		pruneDefaults(s.AdditionalProperties.Structural, false, insideMeta)
	}
	pruneDefaults(s.Items, false, insideMeta)
	for k, p := range s.Properties {
		pruneDefaults(&p, false, insideMeta || (embedded && isMetaField(k)))
		s.Properties[k] = p
	}
}

// applyDefaults fills in defaults as kube does when it decodes a custom resource, from a request or
// from storage: a missing field, or a null where null is not allowed, takes a deep copy of its
// default; the same goes for null items and null additionalProperties values; then it descends into
// every value the schema describes.
func applyDefaults(x any, s *structuralschema.Structural) {
	if s == nil {
		return
	}
	switch x := x.(type) {
	case map[string]any:
		for k, prop := range s.Properties {
			if prop.Default.Object == nil {
				continue
			}
			if v, found := x[k]; !found || nonNullableNull(v, &prop) {
				x[k] = runtime.DeepCopyJSONValue(prop.Default.Object)
			}
		}
		for k, v := range x {
			if prop, found := s.Properties[k]; found {
				applyDefaults(v, &prop)
			} else if s.AdditionalProperties != nil {
				ap := s.AdditionalProperties.Structural
				if nonNullableNull(v, ap) && ap.Default.Object != nil {
					x[k] = runtime.DeepCopyJSONValue(ap.Default.Object)
				}
				applyDefaults(x[k], ap)
			}
		}
	case []any:
		for i := range x {
			if nonNullableNull(x[i], s.Items) && s.Items.Default.Object != nil {
				x[i] = runtime.DeepCopyJSONValue(s.Items.Default.Object)
			}
			applyDefaults(x[i], s.Items)
		}
	}
}

// nonNullableNull reports a null where the schema does not allow one.
func nonNullableNull(x any, s *structuralschema.Structural) bool {
	return x == nil && s != nil && !s.Nullable
}

// dropNulls removes object fields that are null where the schema does not allow null and has no
// default to put in their place, as kube does before defaulting (a client sending "replicas": null
// means "unset"). Nulls in lists are left for validation to reject.
func dropNulls(x any, s *structuralschema.Structural) {
	switch x := x.(type) {
	case map[string]any:
		for k, v := range x {
			sub := fieldSchema(k, s)
			if nonNullableNull(v, sub) && sub.Default.Object == nil {
				delete(x, k)
				continue
			}
			dropNulls(v, sub)
		}
	case []any:
		var items *structuralschema.Structural
		if s != nil {
			items = s.Items
		}
		for _, v := range x {
			dropNulls(v, items)
		}
	}
}

// fieldSchema is the schema of field k of an object with schema s: its property, else its
// additionalProperties, else nil.
func fieldSchema(k string, s *structuralschema.Structural) *structuralschema.Structural {
	if s == nil {
		return nil
	}
	if p, ok := s.Properties[k]; ok {
		return &p
	}
	if s.AdditionalProperties != nil {
		return s.AdditionalProperties.Structural
	}
	return nil
}

// Default fills in obj's defaults in place, as kube's decoding does, and nothing else: the result
// of a server-side apply is already pruned and checked against the schema by the field manager.
func (v *Validator) Default(obj *unstructured.Unstructured) {
	applyDefaults(obj.Object, v.structural)
}

// hasDefaults reports whether s or anything under it declares a default.
func hasDefaults(s *structuralschema.Structural) bool {
	if s == nil {
		return false
	}
	if s.Default.Object != nil {
		return true
	}
	for k := range s.Properties {
		p := s.Properties[k]
		if hasDefaults(&p) {
			return true
		}
	}
	if s.AdditionalProperties != nil && hasDefaults(s.AdditionalProperties.Structural) {
		return true
	}
	return hasDefaults(s.Items)
}

// DefaultsOnRead returns the transform that gives each stored object the defaults of its version's
// schema, as kube's decoder does on every read, so that a default added to a CRD shows in objects
// written before; nil when no version has defaults. It is meant for the watch cache's reads
// (storage.WithReadTransform): it decodes the object, so it runs once per change, not per request.
func (s *Set) DefaultsOnRead() func(value []byte) ([]byte, error) {
	byVersion := map[string]*Validator{}
	for gvr, v := range s.validators {
		if hasDefaults(v.structural) {
			byVersion[gvr.Group+"/"+gvr.Version] = v
		}
	}
	if len(byVersion) == 0 {
		return nil
	}
	return func(value []byte) ([]byte, error) {
		obj, _, err := decodeObject(value, false)
		if err != nil {
			return nil, err
		}
		v, ok := byVersion[obj.GetAPIVersion()]
		if !ok {
			return value, nil
		}
		v.Default(obj)
		out, err := json.Marshal(obj.Object)
		if err != nil {
			return nil, err
		}
		if bytes.Equal(out, value) {
			return value, nil // nothing was missing: keep the stored bytes, shared with etcd's
		}
		return out, nil
	}
}
