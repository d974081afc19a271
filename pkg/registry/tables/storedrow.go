package tables

import (
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apictl/apictl/pkg/jsonscan"
	"github.com/apictl/apictl/pkg/kinds/printers"
	"github.com/apictl/apictl/pkg/metajson"
)

// storedCells says how a custom resource's cells are read from its stored JSON: by plain field paths
// (.spec.size), one per column after the name, as a CRD's columns (Age among them) mostly are.
type storedCells struct {
	paths [][]string
	types []string
}

// newStoredCells returns the stored-JSON cells of a custom resource's columns, or nil when a column
// is not a plain field path of a type AppendStoredRow handles (it then always declines).
func newStoredCells(pc *pathColumns) *storedCells {
	sc := &storedCells{}
	for i, expr := range pc.exprs {
		path, ok := fieldPath(strings.TrimSuffix(strings.TrimPrefix(expr, "{"), "}"))
		if !ok {
			return nil
		}
		switch pc.types[i] {
		case "integer", "string", "boolean", "date":
		default:
			return nil // a number's float formatting is left to encoding/json
		}
		sc.paths = append(sc.paths, path)
		sc.types = append(sc.types, pc.types[i])
	}
	return sc
}

// fieldPath splits a JSONPath such as .spec.size into its fields; ok is false for anything else
// (indexes, filters, wildcards, quoted names).
func fieldPath(expr string) ([]string, bool) {
	if !strings.HasPrefix(expr, ".") || len(expr) < 2 {
		return nil, false
	}
	fields := strings.Split(expr[1:], ".")
	for _, f := range fields {
		if f == "" {
			return nil, false
		}
		for _, c := range f {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
				return nil, false
			}
		}
	}
	return fields, true
}

// AppendStoredRow appends the JSON of the row of a custom resource from its stored JSON, without
// decoding it, and reports whether it could; resourceVersion is the object's, which the stored
// JSON does not hold. The bytes are those AppendRow writes for the decoded object.
//
// This is hand-written for the hot path of a streamed Table LIST, as kubectl get asks for (issue
// 38). Decoding each object and marshalling its row by reflection cost 173 allocations and 8.8 KB per
// row (BenchmarkAppendStoredRow), and 8 such LISTs of 100,000 objects grew the server's heap by
// 1 GiB of garbage. It declines, for AppendRow to do the work, whenever the row is not plain: rows
// that carry the whole object or none, a built-in kind, a column that is not a plain field path or
// whose value is not of its type, metadata with a member or a string encoding/json would write
// otherwise, and times not in the form kube writes them.
func (b *Builder) AppendStoredRow(dst, stored []byte, resourceVersion int64) ([]byte, bool) {
	sc := b.c.stored
	if sc == nil || (b.opts.IncludeObject != "" && b.opts.IncludeObject != metav1.IncludeMetadata) {
		return dst, false
	}
	var m metajson.Meta
	if !m.Read(stored) {
		return dst, false
	}
	start := len(dst)
	dst = append(dst, `{"cells":[`...)
	dst, ok := b.appendStoredCells(dst, sc, stored, m.Name)
	if !ok {
		return dst[:start], false
	}
	dst = append(dst, `],"object":{"kind":"PartialObjectMetadata","apiVersion":"`...)
	dst = append(dst, b.opts.apiVersion()...)
	dst = append(dst, `","metadata":`...)
	if dst, ok = m.Append(dst, resourceVersion); !ok {
		return dst[:start], false
	}
	return append(dst, "}}"...), true
}

func (b *Builder) appendStoredCells(dst []byte, sc *storedCells, stored, name []byte) ([]byte, bool) {
	dst = metajson.AppendQuoted(dst, name)
	for i, path := range sc.paths {
		dst = append(dst, ',')
		val, found, ok := lookup(stored, path)
		if !ok {
			return dst, false
		}
		if !found {
			dst = append(dst, "null"...)
			continue
		}
		if dst, ok = appendStoredCell(dst, sc.types[i], val, b.now.Time); !ok {
			return dst, false
		}
	}
	return dst, true
}

// appendStoredCell writes the cell pathCell makes of a value of the column's own type.
func appendStoredCell(dst []byte, typ string, val []byte, now time.Time) ([]byte, bool) {
	switch typ {
	case "integer":
		if _, ok := metajson.CanonicalInt(val); ok {
			return append(dst, val...), true
		}
	case "boolean":
		if string(val) == "true" || string(val) == "false" {
			return append(dst, val...), true
		}
	case "string":
		if s, ok := jsonscan.PlainString(val); ok {
			return metajson.AppendQuoted(dst, s), true
		}
	case "date":
		if s, ok := jsonscan.PlainString(val); ok {
			return appendAgeCell(dst, s, now)
		}
	}
	return dst, false
}

// appendAgeCell writes the cell cellValue makes of a date, without its string or its boxing: a
// row's Age cell was most of its allocations (BenchmarkAppendStoredRow). It declines the cells
// encoding/json would escape (<invalid>, <unknown>).
func appendAgeCell(dst, s []byte, now time.Time) ([]byte, bool) {
	var t metav1.Time
	if err := t.UnmarshalQueryParameter(string(s)); err != nil || t.IsZero() {
		return dst, false
	}
	start := len(dst)
	dst = printers.AppendAge(append(dst, '"'), t, now)
	if !jsonscan.Plain(dst[start+1:]) {
		return dst[:start], false
	}
	return append(dst, '"'), true
}

// lookup finds the value at path in the JSON object data. found is false when a member is missing
// on the way; ok is false when the way passes through something that is not an object.
func lookup(data []byte, path []string) (val []byte, found, ok bool) {
	val = data
	for _, field := range path {
		var next []byte
		if !jsonscan.WalkObject(val, func(key, v []byte) bool {
			if string(key) == field {
				next = v
			}
			return true
		}) {
			return nil, false, false
		}
		if next == nil {
			return nil, false, true
		}
		if string(next) == "null" {
			return nil, false, false
		}
		val = next
	}
	return val, true, true
}
