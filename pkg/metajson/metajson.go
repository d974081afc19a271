// Package metajson writes a stored object's metadata as json.Marshal writes its ObjectMeta, straight
// from the stored JSON, without decoding it: the PartialObjectMetadata of a Table row or of a
// PartialObjectMetadataList item. Hand-written for those LISTs' hot path (issue 38): decoding each
// object and marshalling its metadata by reflection made 8 such LISTs of 100,000 custom objects grow
// the server's heap by a gigabyte of garbage. Anything it would write otherwise than encoding/json
// does (a member ObjectMeta lacks, a string with escapes, a time not in the form kube writes) it
// declines, for the caller to decode.
package metajson

import (
	"bytes"
	"strconv"
	"time"

	"github.com/apictl/apictl/pkg/jsonscan"
)

// The members of ObjectMeta in the order encoding/json writes them, which is how a row's
// PartialObjectMetadata is written from a stored object's metadata (stored in another order).
const (
	metaName = iota
	metaGenerateName
	metaNamespace
	metaSelfLink
	metaUID
	metaResourceVersion
	metaGeneration
	metaCreationTimestamp
	metaDeletionTimestamp
	metaDeletionGracePeriodSeconds
	metaLabels
	metaAnnotations
	metaOwnerReferences
	metaFinalizers
	metaManagedFields
	metaMembers
)

var metaNames = [metaMembers]string{"name", "generateName", "namespace", "selfLink", "uid", "resourceVersion",
	"generation", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations",
	"ownerReferences", "finalizers", "managedFields"}

// Meta is a stored object's metadata, member by member, as raw JSON.
type Meta struct {
	raw [metaMembers][]byte
	// Name is the object's name, as it is between its quotes (plain: see jsonscan.Plain).
	Name []byte
}

// Read finds the metadata of the stored object and takes its members; it fails on a member
// ObjectMeta does not have, or on a name that is not plain.
func (m *Meta) Read(stored []byte) bool {
	var metadata []byte
	if !jsonscan.WalkObject(stored, func(key, val []byte) bool {
		if string(key) == "metadata" {
			metadata = val
		}
		return true
	}) || metadata == nil {
		return false
	}
	ok := jsonscan.WalkObject(metadata, func(key, val []byte) bool {
		for i, n := range metaNames {
			if string(key) == n {
				m.raw[i] = val
				return true
			}
		}
		return false
	})
	if !ok {
		return false
	}
	if m.raw[metaName] != nil {
		m.Name, ok = jsonscan.PlainString(m.raw[metaName])
	}
	return ok
}

// Append writes the metadata as json.Marshal writes the ObjectMeta that kube's unstructured getters,
// or decoding into ObjectMeta, make of it, with resourceVersion rv: empty members (a zero time too)
// left out, maps in key order. It reports false, dst unusable, for anything it declines.
func (m *Meta) Append(dst []byte, rv int64) ([]byte, bool) {
	w := memberWriter{dst: append(dst, '{')}
	ok := true
	for i := 0; i < metaMembers && ok; i++ {
		val := m.raw[i]
		switch i {
		case metaResourceVersion:
			w.name(metaNames[i])
			w.dst = append(w.dst, '"')
			w.dst = strconv.AppendInt(w.dst, rv, 10)
			w.dst = append(w.dst, '"')
		case metaCreationTimestamp, metaDeletionTimestamp:
			ok = val == nil || w.time(metaNames[i], val)
		case metaGeneration, metaDeletionGracePeriodSeconds:
			ok = val == nil || w.int(metaNames[i], val, i == metaGeneration)
		case metaLabels, metaAnnotations:
			ok = val == nil || w.stringMap(metaNames[i], val)
		case metaOwnerReferences:
			ok = val == nil || w.array(metaNames[i], val, appendOwnerReference)
		case metaFinalizers:
			ok = val == nil || w.array(metaNames[i], val, appendPlainString)
		case metaManagedFields:
			ok = val == nil || w.array(metaNames[i], val, appendManagedFields)
		default:
			ok = val == nil || w.string(metaNames[i], val, true)
		}
	}
	return append(w.dst, '}'), ok
}

// memberWriter writes the members of one JSON object, commas between them.
type memberWriter struct {
	dst  []byte
	some bool
}

func (w *memberWriter) name(n string) {
	if w.some {
		w.dst = append(w.dst, ',')
	}
	w.some = true
	w.dst = append(w.dst, '"')
	w.dst = append(w.dst, n...)
	w.dst = append(w.dst, '"', ':')
}

// string writes a plain string member, left out when empty if omitEmpty.
func (w *memberWriter) string(n string, val []byte, omitEmpty bool) bool {
	s, ok := jsonscan.PlainString(val)
	if !ok || omitEmpty && len(s) == 0 {
		return ok
	}
	w.name(n)
	w.dst = AppendQuoted(w.dst, s)
	return true
}

// int writes an integer member, left out when zero if omitZero.
func (w *memberWriter) int(n string, val []byte, omitZero bool) bool {
	v, ok := CanonicalInt(val)
	if !ok || omitZero && v == 0 {
		return ok
	}
	w.name(n)
	w.dst = append(w.dst, val...)
	return true
}

func (w *memberWriter) time(n string, val []byte) bool {
	if _, ok := CanonicalTime(val); !ok {
		return false
	}
	w.name(n)
	w.dst = append(w.dst, val...)
	return true
}

func (w *memberWriter) bool(n string, val []byte) bool {
	if string(val) != "true" && string(val) != "false" {
		return false
	}
	w.name(n)
	w.dst = append(w.dst, val...)
	return true
}

// stringMap writes a map of plain strings whose keys are stored in encoding/json's order (sorted),
// left out when empty.
func (w *memberWriter) stringMap(n string, val []byte) bool {
	start, some, empty := len(w.dst), w.some, true
	var last []byte
	w.name(n)
	w.dst = append(w.dst, '{')
	ok := jsonscan.WalkObject(val, func(key, v []byte) bool {
		s, ok := jsonscan.PlainString(v)
		if !ok || !jsonscan.Plain(key) || !empty && bytes.Compare(last, key) >= 0 {
			return false
		}
		if !empty {
			w.dst = append(w.dst, ',')
		}
		w.dst = AppendQuoted(w.dst, key)
		w.dst = append(w.dst, ':')
		w.dst = AppendQuoted(w.dst, s)
		last, empty = key, false
		return true
	})
	return w.close(start, some, '}', empty, ok)
}

// array writes an array whose elements each appends, left out when empty.
func (w *memberWriter) array(n string, val []byte, each func(dst, elem []byte) ([]byte, bool)) bool {
	start, some, empty := len(w.dst), w.some, true
	w.name(n)
	w.dst = append(w.dst, '[')
	ok := jsonscan.WalkArray(val, func(elem []byte) bool {
		if !empty {
			w.dst = append(w.dst, ',')
		}
		var ok bool
		w.dst, ok = each(w.dst, elem)
		empty = false
		return ok
	})
	return w.close(start, some, ']', empty, ok)
}

// close ends an object or array member, or takes it back when it is empty (omitempty).
func (w *memberWriter) close(start int, some bool, closing byte, empty, ok bool) bool {
	if empty {
		w.dst, w.some = w.dst[:start], some
		return ok
	}
	w.dst = append(w.dst, closing)
	return ok
}

func appendPlainString(dst, elem []byte) ([]byte, bool) {
	s, ok := jsonscan.PlainString(elem)
	return AppendQuoted(dst, s), ok
}

var (
	ownerReferenceNames = []string{"apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion"}
	managedFieldsNames  = []string{"manager", "operation", "apiVersion", "time", "fieldsType", "fieldsV1", "subresource"}
)

// appendOwnerReference writes an OwnerReference: apiVersion, kind, name and uid always, controller
// and blockOwnerDeletion when stored.
func appendOwnerReference(dst, elem []byte) ([]byte, bool) {
	return appendMembers(dst, elem, ownerReferenceNames, func(w memberWriter, i int, raw []byte) (memberWriter, bool) {
		switch {
		case i >= 4:
			ok := raw == nil || w.bool(ownerReferenceNames[i], raw)
			return w, ok
		case raw == nil:
			w.name(ownerReferenceNames[i])
			w.dst = append(w.dst, `""`...)
			return w, true
		}
		ok := w.string(ownerReferenceNames[i], raw, false)
		return w, ok
	})
}

// appendManagedFields writes a ManagedFieldsEntry, its empty members left out.
func appendManagedFields(dst, elem []byte) ([]byte, bool) {
	return appendMembers(dst, elem, managedFieldsNames, func(w memberWriter, i int, raw []byte) (memberWriter, bool) {
		switch name := managedFieldsNames[i]; {
		case raw == nil:
			return w, true
		case name == "time":
			ok := w.time(name, raw)
			return w, ok
		case name == "fieldsV1":
			if !canonicalFields(raw) {
				return w, false
			}
			w.name(name)
			w.dst = append(w.dst, raw...)
			return w, true
		default:
			ok := w.string(name, raw, true)
			return w, ok
		}
	})
}

// appendMembers writes the object elem, whose members may only be names, one member at a time in
// the order of names (member is given each one's raw value, nil when absent). The writer goes to
// member and back by value: a pointer given to a function value moves it to the heap, an allocation
// for every owner reference and managed-fields entry of every item of a streamed LIST.
func appendMembers(dst, elem []byte, names []string, member func(w memberWriter, i int, raw []byte) (memberWriter, bool)) ([]byte, bool) {
	var buf [8][]byte
	raw := buf[:len(names)]
	if !readMembers(elem, names, raw) {
		return dst, false
	}
	w := memberWriter{dst: append(dst, '{')}
	for i := range names {
		var ok bool
		if w, ok = member(w, i, raw[i]); !ok {
			return w.dst, false
		}
	}
	return append(w.dst, '}'), true
}

// readMembers takes the members of the object elem into raw by names; it fails on any other.
func readMembers(elem []byte, names []string, raw [][]byte) bool {
	return jsonscan.WalkObject(elem, func(key, val []byte) bool {
		for i, n := range names {
			if string(key) == n {
				raw[i] = val
				return true
			}
		}
		return false
	})
}

// canonicalFields reports whether a fieldsV1 set is written as json.Marshal writes it once decoded:
// objects only, keys plain and sorted, no space.
func canonicalFields(val []byte) bool {
	if len(val) < 2 || val[0] != '{' || bytes.ContainsAny(val, " \t\r\n") {
		return false
	}
	var last []byte
	first := true
	return jsonscan.WalkObject(val, func(key, v []byte) bool {
		if !jsonscan.Plain(key) || !first && bytes.Compare(last, key) >= 0 || !canonicalFields(v) {
			return false
		}
		last, first = key, false
		return true
	})
}

// CanonicalTime parses a stored time that metav1.Time writes back unchanged: RFC 3339 in UTC, whole
// seconds, not zero (which it writes as null).
func CanonicalTime(val []byte) (time.Time, bool) {
	s, ok := jsonscan.PlainString(val)
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, string(s))
	if err != nil || t.IsZero() {
		return time.Time{}, false
	}
	var buf [32]byte
	return t, bytes.Equal(t.UTC().AppendFormat(buf[:0], time.RFC3339), s)
}

// AppendQuoted appends a plain string (see jsonscan.Plain) in its quotes.
func AppendQuoted(dst, plain []byte) []byte {
	dst = append(dst, '"')
	dst = append(dst, plain...)
	return append(dst, '"')
}

// CanonicalInt parses an integer written as encoding/json writes an int64.
func CanonicalInt(val []byte) (int64, bool) {
	n, err := strconv.ParseInt(string(val), 10, 64)
	if err != nil {
		return 0, false
	}
	var buf [20]byte
	return n, bytes.Equal(strconv.AppendInt(buf[:0], n, 10), val)
}
