package tables

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/jsonpath"

	"github.com/apictl/apictl/pkg/kinds/printers"
	"github.com/apictl/apictl/pkg/routes"
)

// pathColumns are columns whose cells come from a JSONPath into the object, as kube's CRD convertor
// evaluates additionalPrinterColumns. The first column is always the object's name.
type pathColumns struct {
	defs []metav1.TableColumnDefinition
	// names, exprs and types describe the columns after the name, in order.
	names, exprs, types []string
}

func newPathColumns(res schema.GroupResource, cols []routes.PrinterColumn) (*pathColumns, error) {
	pc := &pathColumns{defs: []metav1.TableColumnDefinition{printers.NameColumn()}}
	// The model lists the Name column that kube puts before a CRD's own columns.
	if len(cols) > 0 && isNameColumn(cols[0]) {
		cols = cols[1:]
	}
	var errs []error
	for _, col := range cols {
		if col.JSONPath == "" {
			errs = append(errs, fmt.Errorf("column %q of %s has no JSONPath, and no printer computes it", col.Name, res))
			continue
		}
		expr := "{" + col.JSONPath + "}"
		if err := jsonpath.New(col.Name).Parse(expr); err != nil {
			errs = append(errs, fmt.Errorf("column %q of %s: JSONPath %q: %w", col.Name, res, col.JSONPath, err))
			continue
		}
		desc := col.Description
		if desc == "" {
			desc = "Custom resource definition column (in JSONPath format): " + col.JSONPath
		}
		pc.defs = append(pc.defs, metav1.TableColumnDefinition{
			Name: col.Name, Type: col.Type, Format: col.Format, Description: desc, Priority: col.Priority,
		})
		pc.names = append(pc.names, col.Name)
		pc.exprs = append(pc.exprs, expr)
		pc.types = append(pc.types, col.Type)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return pc, nil
}

func isNameColumn(c routes.PrinterColumn) bool {
	return c.Name == "Name" && c.Format == "name" && (c.JSONPath == "" || c.JSONPath == ".metadata.name")
}

func (pc *pathColumns) definitions() []metav1.TableColumnDefinition { return pc.defs }

// newCells parses the expressions anew: a parsed JSONPath keeps state while it runs, so each table
// needs its own.
func (pc *pathColumns) newCells() (cellFunc, error) {
	paths := make([]*jsonpath.JSONPath, len(pc.exprs))
	for i, expr := range pc.exprs {
		p := jsonpath.New(pc.names[i])
		if err := p.Parse(expr); err != nil {
			return nil, fmt.Errorf("column %q: JSONPath %q: %w", pc.names[i], expr, err)
		}
		p.AllowMissingKeys(true)
		paths[i] = p
	}
	var buf bytes.Buffer
	return func(obj runtime.Object, m metav1.Object, now time.Time) ([]any, error) {
		content, err := unstructuredContent(obj)
		if err != nil {
			return nil, err
		}
		cells := make([]any, 1, 1+len(paths))
		cells[0] = m.GetName()
		for i, p := range paths {
			cells = append(cells, pathCell(p, &buf, pc.types[i], content, now))
		}
		return cells, nil
	}, nil
}

// unstructuredContent is the object as JSONPath sees it: maps, slices, strings, int64, float64,
// bool and nil.
func unstructuredContent(obj runtime.Object) (map[string]any, error) {
	if u, ok := obj.(runtime.Unstructured); ok {
		return u.UnstructuredContent(), nil
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("reading a %T as JSON: %w", obj, err)
	}
	return content, nil
}

// pathCell evaluates one column. A path that finds nothing, or a value that does not fit the column's
// type, is a null cell, which kubectl prints empty. A string column prints the first value as
// JSONPath prints it (a map or a list as JSON); the other types convert it as cellValue says.
func pathCell(p *jsonpath.JSONPath, buf *bytes.Buffer, typ string, content map[string]any, now time.Time) any {
	results, err := p.FindResults(content)
	if err != nil || len(results) == 0 || len(results[0]) == 0 {
		return nil
	}
	value := results[0][0].Interface()
	if typ != "string" {
		return cellValue(typ, value, now)
	}
	buf.Reset()
	if err := p.PrintResults(buf, []reflect.Value{reflect.ValueOf(value)}); err != nil {
		return nil
	}
	return buf.String()
}

// cellValue converts a JSON value to the cell of a column of type typ: integer (a number truncated
// to int64), number (float64), boolean, string, or date (an RFC 3339 string shown as its age,
// <invalid> if it does not parse). A value of another JSON type is null.
func cellValue(typ string, value any, now time.Time) any {
	switch typ {
	case "integer":
		switch v := value.(type) {
		case int64:
			return v
		case float64:
			return int64(v)
		case json.Number:
			if i, err := v.Int64(); err == nil {
				return i
			}
		}
	case "number":
		switch v := value.(type) {
		case int64:
			return float64(v)
		case float64:
			return v
		case json.Number:
			if f, err := v.Float64(); err == nil {
				return f
			}
		}
	case "boolean":
		if b, ok := value.(bool); ok {
			return b
		}
	case "string":
		if s, ok := value.(string); ok {
			return s
		}
	case "date":
		if s, ok := value.(string); ok {
			var t metav1.Time
			if err := t.UnmarshalQueryParameter(s); err != nil {
				return "<invalid>"
			}
			return printers.Age(t, now)
		}
	}
	return nil
}
