package crconvert

import (
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// structuralOf is a version's structural schema with its defaults pruned, as kube's CRD handler
// prepares it for its storage codec.
func structuralOf(props *apiextensionsv1.JSONSchemaProps) (*structuralschema.Structural, error) {
	internal := &apiextensions.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(props, internal, nil); err != nil {
		return nil, err
	}
	s, err := structuralschema.NewStructural(internal)
	if err != nil {
		return nil, err
	}
	// NewStructural shares default values with the CRD: prune a copy.
	s = s.DeepCopy()
	if err := structuraldefaulting.PruneDefaults(s); err != nil {
		return nil, err
	}
	return s, nil
}

// coerce is kube's unstructuredSchemaCoercer (apiextensions-apiserver's customresource_handler.go) for
// an object of this CRD at any of its versions: unknown fields are pruned, nulls the schema does not
// allow dropped and the metadata of embedded resources put in its normal form, at the object's own
// version. An object read from storage (stored) has metadata of the wrong type dropped and a missing
// generation set to 1.
//
// Unlike kube's, it decodes and re-encodes an object's own metadata only when a quick look finds it not
// in ObjectMeta's normal form: apictl stores metadata in that form (crschema coerces every write), and
// a converter hands it back unchanged but for labels and annotations, which kube's webhook converter
// validates. That round trip of every object's metadata, managedFields and all, was two thirds of the
// cost of a converted LIST.
func (c *Converter) coerce(u *unstructured.Unstructured, stored bool) error {
	kind, _, err := unstructured.NestedString(u.Object, "kind")
	if err != nil {
		return err
	}
	apiVersion, _, err := unstructured.NestedString(u.Object, "apiVersion")
	if err != nil {
		return err
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return err
	}
	if gv.Group != c.group || kind != c.kind {
		return nil
	}
	if s := c.schemas[gv.Version]; s != nil {
		// Pruning keeps apiVersion, kind and metadata at the root (isResourceRoot).
		pruning.PruneWithOptions(u.Object, s, true, structuralschema.UnknownFieldPathOptions{})
		structuraldefaulting.PruneNonNullableNullsWithoutDefaults(u.Object, s)
		if ferr, _ := schemaobjectmeta.CoerceWithOptions(nil, u.Object, s, false, schemaobjectmeta.CoerceOptions{DropInvalidFields: stored}); ferr != nil {
			return ferr
		}
	}
	if !stored {
		return nil
	}
	if m, found := u.Object["metadata"]; found && !normalMeta(m) {
		// Written by someone else than apictl: kube's repair, dropping the fields that do not decode.
		meta, _, _, err := schemaobjectmeta.GetObjectMetaWithOptions(u.Object, schemaobjectmeta.ObjectMetaOptions{DropMalformedFields: true})
		if err != nil {
			return err
		}
		if err := schemaobjectmeta.SetObjectMeta(u.Object, meta); err != nil {
			return err
		}
	}
	if meta, ok := u.Object["metadata"].(map[string]any); ok {
		if g, ok := meta["generation"]; !ok || g == int64(0) || g == float64(0) {
			meta["generation"] = int64(1) // as kube repairs very old custom resources
		}
	}
	return nil
}

// metaFieldKind is the JSON shape of an ObjectMeta field, for normalMeta: 0 for a field ObjectMeta does
// not have.
func metaFieldKind(k string) byte {
	switch k {
	case "name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "creationTimestamp", "deletionTimestamp":
		return 's'
	case "generation", "deletionGracePeriodSeconds":
		return 'i'
	case "labels", "annotations":
		return 'm'
	case "finalizers":
		return 'l'
	case "ownerReferences", "managedFields":
		return 'o'
	}
	return 0
}

// normalMeta is a shallow check that stored metadata has ObjectMeta's fields only, each of its JSON
// type: what apictl writes. Anything else takes kube's decoding round trip.
func normalMeta(m any) bool {
	meta, ok := m.(map[string]any)
	if !ok {
		return false
	}
	for k, v := range meta {
		switch metaFieldKind(k) {
		case 's':
			if _, ok := v.(string); !ok {
				return false
			}
		case 'i':
			switch v.(type) {
			case int64, float64:
			default:
				return false
			}
		case 'm':
			mv, ok := v.(map[string]any)
			if !ok {
				return false
			}
			for _, x := range mv {
				if _, ok := x.(string); !ok {
					return false
				}
			}
		case 'l':
			l, ok := v.([]any)
			if !ok {
				return false
			}
			for _, x := range l {
				if _, ok := x.(string); !ok {
					return false
				}
			}
		case 'o':
			l, ok := v.([]any)
			if !ok {
				return false
			}
			for _, x := range l {
				if _, ok := x.(map[string]any); !ok {
					return false
				}
			}
		default:
			return false
		}
	}
	return true
}

// applyDefaults applies the defaults of the object's own version, as kube's storage codec does to every
// object it reads, before converting it.
func (c *Converter) applyDefaults(u *unstructured.Unstructured) {
	gvk := u.GroupVersionKind()
	if gvk.Group != c.group || gvk.Kind != c.kind {
		return
	}
	if s := c.schemas[gvk.Version]; s != nil {
		structuraldefaulting.Default(u.Object, s)
	}
}
