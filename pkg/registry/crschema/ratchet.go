package crschema

import (
	"encoding/json"
	"reflect"

	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"
)

// ratchet validates a value of an updated object and forgives the errors of any part that the update
// left unchanged, as kube's CRD validation ratcheting does (GA in 1.33): objects stored before a schema
// was tightened can still be updated, as long as the update does not touch what is now invalid.
//
// It plugs into kube-openapi's validator through its per-field and per-item hooks: every value that
// has a counterpart in the old object gets its own ratchet. Object fields correlate by name; list items
// correlate only in x-kubernetes-list-type: map lists, by their keys (positions mean nothing in kube's
// other lists).
type ratchet struct {
	schema     *spec.Schema
	path       string
	value, old any

	oldItems map[string]any // old list items by map key, built on first use
}

var _ validate.ValueValidator = (*ratchet)(nil)

func newRatchet(s *spec.Schema, path string, value, old any) *ratchet {
	return &ratchet{schema: s, path: path, value: value, old: old}
}

// Validate validates r's value (the argument is the same value, passed by the parent validator).
func (r *ratchet) Validate(any) *validate.Result {
	res := validate.NewSchemaValidator(r.schema, nil, r.path, strfmt.Default, r.hooks).Validate(r.value)
	if res.IsValid() || !unchanged(r.value, r.old, r.schema) {
		return res
	}
	return &validate.Result{}
}

// SetPath and Applies complete validate.ValueValidator; a ratchet is always made for its value.
func (r *ratchet) SetPath(string) {}

// Applies reports that a ratchet validates any value.
func (r *ratchet) Applies(any, reflect.Kind) bool { return true }

func (r *ratchet) hooks(o *validate.SchemaValidatorOptions) {
	o.NewValidatorForField = r.forField
	o.NewValidatorForIndex = r.forIndex
}

func (r *ratchet) forField(name string, s *spec.Schema, root any, path string, formats strfmt.Registry, opts ...validate.Option) validate.ValueValidator {
	// kube does not ratchet apiVersion and kind at the root.
	if r.path != "" || (name != "apiVersion" && name != "kind") {
		nm, ok1 := r.value.(map[string]any)
		om, ok2 := r.old.(map[string]any)
		if ok1 && ok2 {
			nv, ok1 := nm[name]
			ov, ok2 := om[name]
			if ok1 && ok2 {
				return newRatchet(s, path, nv, ov)
			}
		}
	}
	return validate.NewSchemaValidator(s, root, path, formats, opts...)
}

func (r *ratchet) forIndex(i int, s *spec.Schema, root any, path string, formats strfmt.Registry, opts ...validate.Option) validate.ValueValidator {
	if list, ok := r.value.([]any); ok && i < len(list) {
		if old, ok := r.oldItem(list[i]); ok {
			return newRatchet(s, path, list[i], old)
		}
	}
	return validate.NewSchemaValidator(s, root, path, formats, opts...)
}

// oldItem finds the item of the old list that has item's map keys.
func (r *ratchet) oldItem(item any) (any, bool) {
	keys := mapKeys(r.schema)
	if keys == nil {
		return nil, false
	}
	if r.oldItems == nil {
		r.oldItems = indexByKeys(r.old, keys)
	}
	k, ok := itemKey(item, keys)
	if !ok {
		return nil, false
	}
	old, ok := r.oldItems[k]
	return old, ok
}

// mapKeys returns the x-kubernetes-list-map-keys of a map list, nil for other schemas. The schemas
// come from ToKubeOpenAPI, which keeps the keys as a []string.
func mapKeys(s *spec.Schema) []string {
	if s == nil {
		return nil
	}
	if t, _ := s.Extensions.GetString("x-kubernetes-list-type"); t != "map" {
		return nil
	}
	keys, _ := s.Extensions["x-kubernetes-list-map-keys"].([]string)
	return keys
}

// indexByKeys maps the items of list by their key; the first of duplicates wins.
func indexByKeys(list any, keys []string) map[string]any {
	items, _ := list.([]any)
	out := make(map[string]any, len(items))
	for _, item := range items {
		if k, ok := itemKey(item, keys); ok {
			if _, dup := out[k]; !dup {
				out[k] = item
			}
		}
	}
	return out
}

// itemKey encodes the values of an item's key fields; false for items that are not objects.
func itemKey(item any, keys []string) (string, bool) {
	m, ok := item.(map[string]any)
	if !ok {
		return "", false
	}
	vals := make([]any, len(keys))
	for i, k := range keys {
		vals[i] = m[k]
	}
	b, err := json.Marshal(vals)
	return string(b), err == nil
}

// unchanged reports whether an updated value equals the old one, as kube's ratcheting compares them:
// map lists compare item by key, other lists and scalars by deep equality, and an object is unchanged
// only if every field is unchanged and described by the schema.
func unchanged(value, old any, s *spec.Schema) bool {
	switch v := value.(type) {
	case map[string]any:
		o, ok := old.(map[string]any)
		if !ok || len(v) != len(o) {
			return false
		}
		for k, x := range v {
			y, ok := o[k]
			sub := propertySchema(s, k)
			if !ok || sub == nil || !unchanged(x, y, sub) {
				return false
			}
		}
		return true
	case []any:
		o, ok := old.([]any)
		if !ok || len(v) != len(o) {
			return false
		}
		keys := mapKeys(s)
		if keys == nil {
			return reflect.DeepEqual(v, o)
		}
		oldItems := indexByKeys(o, keys)
		for _, item := range v {
			k, ok := itemKey(item, keys)
			if !ok {
				return false
			}
			prev, ok := oldItems[k]
			if !ok || s.Items == nil || !unchanged(item, prev, s.Items.Schema) {
				return false
			}
		}
		return true
	default:
		return reflect.DeepEqual(value, old)
	}
}

// propertySchema is the schema of field k: its property or additionalProperties schema.
func propertySchema(s *spec.Schema, k string) *spec.Schema {
	if s == nil {
		return nil
	}
	if p, ok := s.Properties[k]; ok {
		return &p
	}
	if s.AdditionalProperties != nil {
		return s.AdditionalProperties.Schema
	}
	return nil
}
