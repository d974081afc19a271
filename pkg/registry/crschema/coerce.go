package crschema

import (
	"fmt"
	"slices"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kjson "sigs.k8s.io/json"
)

// coerceMode says how forgiving decoding is. Requests are strict: malformed metadata is an error and,
// when fieldValidation asks for it, unknown fields are reported. Objects read from storage are
// repaired instead: malformed metadata fields are dropped and a missing generation becomes 1.
type coerceMode struct {
	trackUnknown     bool
	dropInvalid      bool
	repairGeneration bool
}

// Coerce does to a custom resource in memory what kube's decoder does to one it decodes from a
// request: ObjectMeta is normalised (unknown metadata fields dropped), fields the schema does not
// know are pruned, nulls the schema does not allow are dropped, the metadata of embedded resources is
// normalised, and defaults are applied. With reportUnknown it returns the paths of the fields it
// dropped ("metadata.foo", "spec.bar", "spec.items[0].baz"), in kube's order, for fieldValidation. An
// object of another kind, group or version is left alone (validation rejects it). The error is the
// reason a request body cannot be used (metadata of the wrong shape).
func (v *Validator) Coerce(u *unstructured.Unstructured, reportUnknown bool) ([]string, error) {
	return v.coerce(u.Object, coerceMode{trackUnknown: reportUnknown})
}

func (v *Validator) coerce(obj map[string]any, mode coerceMode) ([]string, error) {
	kind, foundKind, err := unstructured.NestedString(obj, "kind")
	if err != nil {
		return nil, err
	}
	apiVersion, foundAPIVersion, err := unstructured.NestedString(obj, "apiVersion")
	if err != nil {
		return nil, err
	}
	meta, foundMeta, unknown, err := objectMeta(obj, nil, mode)
	if err != nil {
		return nil, err
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, err
	}
	// Objects of another kind are left for validation to reject.
	ours := gv == v.gvk.GroupVersion() && kind == v.gvk.Kind
	if ours {
		unknown = append(unknown, pruning.PruneWithOptions(obj, v.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: mode.trackUnknown})...)
		dropNulls(obj, v.structural)
		paths, ferr := coerceEmbedded(nil, obj, v.embedded, mode)
		if ferr != nil {
			return nil, ferr
		}
		slices.Sort(paths)
		unknown = append(unknown, paths...)
		if mode.repairGeneration && foundMeta && meta.Generation == 0 {
			meta.Generation = 1
		}
	}
	// ObjectMeta and TypeMeta go back last, in their normal form, whatever pruning did.
	if foundKind {
		obj["kind"] = kind
	}
	if foundAPIVersion {
		obj["apiVersion"] = apiVersion
	}
	if foundMeta {
		if err := setObjectMeta(obj, meta); err != nil {
			return nil, err
		}
	}
	if ours {
		applyDefaults(obj, v.structural)
	}
	return unknown, nil
}

// objectMeta decodes obj's metadata as an ObjectMeta. In track mode, metadata fields ObjectMeta does not
// have are reported as paths below parent ("metadata.foo", "spec.template.metadata.foo"). A metadata
// value of the wrong shape is an error, unless mode drops invalid fields: then every field that decodes
// on its own is kept and the rest dropped.
func objectMeta(obj map[string]any, parent *field.Path, mode coerceMode) (*metav1.ObjectMeta, bool, []string, error) {
	raw, found := obj["metadata"]
	if !found {
		return nil, false, nil, nil
	}
	data, err := utiljson.Marshal(raw)
	if err != nil {
		return nil, false, nil, err
	}
	prefix := parent.Child("metadata").String() + "."
	meta := &metav1.ObjectMeta{}
	unknown, err := decodeMeta(data, meta, mode.trackUnknown, prefix)
	if err == nil {
		return meta, true, unknown, nil
	}
	if !mode.dropInvalid {
		return nil, true, nil, err
	}
	fields, ok := raw.(map[string]any)
	if !ok {
		return nil, false, nil, fmt.Errorf("invalid metadata: expected object, got %T", raw)
	}
	// Decoding one field at a time into the same struct keeps every field that decodes.
	meta, unknown = &metav1.ObjectMeta{}, nil
	for k, val := range fields {
		one, err := utiljson.Marshal(map[string]any{k: val})
		if err != nil || utiljson.Unmarshal(one, &metav1.ObjectMeta{}) != nil {
			continue
		}
		u, _ := decodeMeta(one, meta, mode.trackUnknown, prefix)
		unknown = append(unknown, u...)
	}
	return meta, true, unknown, nil
}

// decodeMeta unmarshals data into meta; with track it returns the unknown fields as paths after prefix.
func decodeMeta(data []byte, meta *metav1.ObjectMeta, track bool, prefix string) ([]string, error) {
	if !track {
		return nil, utiljson.Unmarshal(data, meta)
	}
	strict, err := kjson.UnmarshalStrict(data, meta)
	if err != nil {
		return nil, err
	}
	var unknown []string
	for _, e := range strict {
		if fe, ok := e.(kjson.FieldError); ok {
			unknown = append(unknown, prefix+fe.FieldPath())
		}
	}
	return unknown, nil
}

// setObjectMeta writes meta back into obj in its unstructured form.
func setObjectMeta(obj map[string]any, meta *metav1.ObjectMeta) error {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(meta)
	if err != nil {
		return err
	}
	obj["metadata"] = m
	return nil
}

// coerceEmbedded normalises the TypeMeta and ObjectMeta of the embedded resources below x, following the
// schema's embedded-resource branches n: apiVersion and kind must be strings and metadata an
// ObjectMeta, whose unknown fields are dropped (and reported in track mode). The root's own metadata is
// the caller's. With dropInvalid, values of the wrong type are dropped instead of rejected.
func coerceEmbedded(path *field.Path, x any, n *embeddedNode, mode coerceMode) ([]string, *field.Error) {
	if n == nil {
		return nil, nil
	}
	var unknown []string
	switch x := x.(type) {
	case map[string]any:
		for k, val := range x {
			if n.resource {
				u, err := coerceEmbeddedMeta(path, x, k, val, mode)
				if err != nil {
					return nil, err
				}
				unknown = append(unknown, u...)
			}
			sub := n.child(k)
			if sub == nil {
				continue
			}
			p := path.Key(k)
			if _, declared := n.properties[k]; declared {
				p = path.Child(k)
			}
			u, err := coerceEmbedded(p, x[k], sub, mode)
			if err != nil {
				return nil, err
			}
			unknown = append(unknown, u...)
		}
	case []any:
		for i, val := range x {
			u, err := coerceEmbedded(path.Index(i), val, n.items, mode)
			if err != nil {
				return nil, err
			}
			unknown = append(unknown, u...)
		}
	}
	return unknown, nil
}

// coerceEmbeddedMeta handles field k of an embedded resource x.
func coerceEmbeddedMeta(path *field.Path, x map[string]any, k string, val any, mode coerceMode) ([]string, *field.Error) {
	switch k {
	case "apiVersion", "kind":
		if _, ok := val.(string); ok {
			return nil, nil
		}
		if mode.dropInvalid {
			delete(x, k)
			return nil, nil
		}
		return nil, field.Invalid(path.Child(k), val, "must be a string")
	case "metadata":
		meta, found, unknown, err := objectMeta(x, path, mode)
		if err != nil {
			if mode.dropInvalid {
				return nil, nil
			}
			return nil, field.Invalid(path.Child("metadata"), val, err.Error())
		}
		if !found {
			return unknown, nil
		}
		if err := setObjectMeta(x, meta); err != nil {
			return nil, field.Invalid(path.Child("metadata"), val, err.Error())
		}
		if meta.CreationTimestamp.IsZero() {
			unstructured.RemoveNestedField(x, "metadata", "creationTimestamp")
		}
		return unknown, nil
	}
	return nil, nil
}
