package patch

import (
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// typeConverter is the library's type converter for one target, with two savings on the objects
// the field manager compares a write with.
//
// The empty object a create is compared with is typed once, not on every create: it is one object
// per target (ownership.empty) that nothing modifies, and a typed value is only ever read.
//
// A stored object's managedFields are typed as a one-entry stand-in instead of as themselves.
// Typing a Go object's managedFields is most of the cost of typing a stored object: every
// FieldsV1 goes through JSON (marshalled, then decoded into maps) and the result is validated and
// walked again by the comparison. None of it can change the result, provided the list types
// cleanly:
//   - managedFields is an atomic list in the schema (kube's +listType=atomic), so the comparison,
//     the merge, pruning and the field sets only ever see it as one value, at
//     .metadata.managedFields, never its items;
//   - the new object of an update has had its managedFields removed before it is typed, so the
//     live object's list is "removed" whatever it holds, as long as it holds something; in an apply,
//     both sides of every comparison carry the live object's list, stand-in or not, so they are equal
//     either way;
//   - the objects the merge makes from these values never keep their managedFields: the field
//     manager replaces them with the ones it encodes.
//
// A list that would not type cleanly (a FieldsV1 that is not a JSON object of objects: the
// library fails, or panics, on some of those) is typed as it is, so the library reacts to it as it
// always did. Unstructured objects (custom resources) are typed as they are: their managedFields
// are maps already, with no JSON to go through.
type typeConverter struct {
	managedfields.TypeConverter
	// empty is the target's empty object and emptyTyped its typed value; emptyTyped is nil if
	// typing it failed, and the library then types it every time, reporting what it reports.
	empty      runtime.Object
	emptyTyped *typed.TypedValue
}

// newTargetConverter wraps the API's converter for the target whose empty object is empty.
func newTargetConverter(c managedfields.TypeConverter, empty runtime.Object) managedfields.TypeConverter {
	tc := &typeConverter{TypeConverter: c, empty: empty}
	if tv, err := c.ObjectToTyped(empty, typed.AllowDuplicates); err == nil {
		tc.emptyTyped = tv
	}
	return tc
}

// managedFieldsStandIn is the list typed in place of a stored object's managedFields: not empty,
// so that it is present exactly when the real one is, and nothing in it.
var managedFieldsStandIn = []metav1.ManagedFieldsEntry{{}}

// ObjectToTyped implements managedfields.TypeConverter.
func (c *typeConverter) ObjectToTyped(obj runtime.Object, opts ...typed.ValidationOptions) (*typed.TypedValue, error) {
	// Validation options cannot matter for an object without lists.
	if c.emptyTyped != nil && obj == c.empty {
		return c.emptyTyped, nil
	}
	return c.TypeConverter.ObjectToTyped(withManagedFieldsStandIn(obj), opts...)
}

// withManagedFieldsStandIn returns a shallow copy of a Go object whose managedFields type cleanly,
// with the stand-in list in their place, or obj itself. The copy shares everything but the
// ObjectMeta's slice header, so it is for reading only, as typing does.
func withManagedFieldsStandIn(obj runtime.Object) runtime.Object {
	if _, ok := obj.(runtime.Unstructured); ok {
		return obj
	}
	accessor, ok := obj.(metav1.ObjectMetaAccessor)
	if !ok {
		return obj
	}
	entries := accessor.GetObjectMeta().GetManagedFields()
	if len(entries) == 0 || !typesCleanly(entries) {
		return obj
	}
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return obj
	}
	out := reflect.New(v.Elem().Type())
	out.Elem().Set(v.Elem())
	copied, ok := out.Interface().(runtime.Object)
	if !ok {
		return obj
	}
	copied.(metav1.ObjectMetaAccessor).GetObjectMeta().SetManagedFields(managedFieldsStandIn)
	return copied
}

// typesCleanly reports whether every entry's FieldsV1 is absent or a field set in the form the
// library writes: a JSON object whose members are all objects, down to empty ones. The library
// decodes such a FieldsV1 into nested maps and validates it without error; the other fields of an
// entry are strings and a time, which always type.
func typesCleanly(entries []metav1.ManagedFieldsEntry) bool {
	for i := range entries {
		if f := entries[i].FieldsV1; f != nil && !isFieldSetJSON(f.GetRawBytes()) {
			return false
		}
	}
	return true
}

// maxFieldSetDepth bounds the nesting isFieldSetJSON accepts. Real field sets are a few levels
// deep; a deeper one is typed as it is, which is always correct, only slower.
const maxFieldSetDepth = 64

// isFieldSetJSON reports whether raw is a JSON object whose members are all objects, recursively,
// followed by nothing but whitespace: the shape of a FieldsV1 the library wrote. (The library
// tells a FieldsV1's JSON type by its first byte, so a leading space is not the same thing.) It
// allocates nothing.
func isFieldSetJSON(raw []byte) bool {
	i, ok := skipFieldSet(raw, 0, 0)
	return ok && skipSpace(raw, i) == len(raw)
}

// skipFieldSet reads the object that starts at raw[i] and returns the index after it.
func skipFieldSet(raw []byte, i, depth int) (int, bool) {
	if depth > maxFieldSetDepth || i >= len(raw) || raw[i] != '{' {
		return 0, false
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return i + 1, true
	}
	for {
		var ok bool
		if i, ok = skipString(raw, i); !ok {
			return 0, false
		}
		if i = skipSpace(raw, i); i >= len(raw) || raw[i] != ':' {
			return 0, false
		}
		if i, ok = skipFieldSet(raw, skipSpace(raw, i+1), depth+1); !ok {
			return 0, false
		}
		if i = skipSpace(raw, i); i >= len(raw) {
			return 0, false
		}
		switch raw[i] {
		case '}':
			return i + 1, true
		case ',':
			i = skipSpace(raw, i+1)
		default:
			return 0, false
		}
	}
}

// skipString reads the JSON string that starts at raw[i], with encoding/json's rules: no control
// characters, only JSON's escapes (bytes that are not UTF-8 are accepted, as the decoder does).
func skipString(raw []byte, i int) (int, bool) {
	if i >= len(raw) || raw[i] != '"' {
		return 0, false
	}
	for i++; i < len(raw); i++ {
		switch c := raw[i]; {
		case c == '"':
			return i + 1, true
		case c < 0x20:
			return 0, false
		case c == '\\':
			i++
			if i >= len(raw) {
				return 0, false
			}
			switch raw[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(raw) {
					return 0, false
				}
				for _, h := range raw[i+1 : i+5] {
					if !isHex(h) {
						return 0, false
					}
				}
				i += 4
			default:
				return 0, false
			}
		}
	}
	return 0, false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// skipSpace returns the index of the first byte at or after i that is not JSON whitespace.
func skipSpace(raw []byte, i int) int {
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r') {
		i++
	}
	return i
}
