package tables

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apictl/apictl/pkg/routes"
)

// Converter makes the tables of one resource. It is immutable and safe for concurrent use.
type Converter struct {
	gvk      schema.GroupVersionKind
	resource schema.GroupResource
	columns  []metav1.TableColumnDefinition
	// newCells returns the cell function of one table. Tables get their own because JSONPath
	// expressions keep state while they are evaluated and cannot be shared between goroutines.
	newCells func() (cellFunc, error)
	// nullEmpty keeps an empty table's rows null: kube's default convertor appends rows to a nil
	// slice, while its printers and its CRD convertor start from an empty one.
	nullEmpty bool
	now       func() time.Time
	// stored, for a custom resource, reads its rows' cells from stored JSON (AppendStoredRow).
	stored *storedCells
}

// cellFunc returns the cells of obj's row, m being obj's metadata and now the time ages run to.
type cellFunc func(obj runtime.Object, m metav1.Object, now time.Time) ([]any, error)

// Option changes how a Converter is built.
type Option func(*Converter)

// WithClock sets the clock that ages (AGE, LAST SEEN, date columns) are measured against; each
// table reads it once, so that all of its rows agree. The default (also for nil) is time.Now.
func WithClock(now func() time.Time) Option {
	return func(c *Converter) {
		if now != nil {
			c.now = now
		}
	}
}

// New returns the converter of res, a resource of the group version gv.
//
// A built-in kind that kube prints in code (configmaps, secrets, namespaces, serviceaccounts, events,
// leases, role bindings, roles) gets kube's columns and cells; res.PrinterColumns must then name the
// same columns in the same order with the same priorities, so that the model and the printers cannot
// drift apart unnoticed (an empty list is taken as the model not knowing). Any other resource prints
// res.PrinterColumns, evaluating each column's JSONPath as kube does for CRDs; the Name column that
// heads them is the object's name. A resource without columns prints kube's default NAME and
// CREATED AT.
func New(gv schema.GroupVersion, res *routes.Resource, opts ...Option) (*Converter, error) {
	c := &Converter{
		gvk:      gv.WithKind(res.Kind),
		resource: schema.GroupResource{Group: gv.Group, Resource: res.Plural},
		now:      time.Now,
	}
	for _, o := range opts {
		o(c)
	}
	if p, ok := builtinPrinter(c.gvk.GroupKind()); ok && !res.Custom {
		if len(res.PrinterColumns) > 0 && !sameColumns(res.PrinterColumns, p.columns) {
			return nil, fmt.Errorf("the printer columns of %s (%s) are not those kube prints (%s): change pkg/routes and pkg/registry/tables together",
				c.resource, modelColumnNames(res.PrinterColumns), columnNames(p.columns))
		}
		return c.withPrinter(p), nil
	}
	if len(res.PrinterColumns) == 0 {
		return c.withPrinter(defaultPrinter()), nil
	}
	pc, err := newPathColumns(c.resource, res.PrinterColumns)
	if err != nil {
		return nil, err
	}
	if res.Custom {
		c.stored = newStoredCells(pc)
	}
	c.columns = pc.definitions()
	c.newCells = pc.newCells
	return c, nil
}

// withPrinter makes c print with p, whose cells keep no state and serve every table.
func (c *Converter) withPrinter(p printer) *Converter {
	c.columns, c.nullEmpty = p.columns, p.nullEmpty
	c.newCells = func() (cellFunc, error) { return p.cells, nil }
	return c
}

// ForAPI builds the converter of every resource of api, keyed by group, version and resource. It
// reports every resource it cannot build, joined.
func ForAPI(api *routes.API, opts ...Option) (map[schema.GroupVersionResource]*Converter, error) {
	out := map[schema.GroupVersionResource]*Converter{}
	var errs []error
	for _, g := range api.Groups() {
		for _, v := range g.Versions {
			gv := schema.GroupVersion{Group: g.Name, Version: v.Name}
			for i := range v.Resources {
				if v.Resources[i].CreateOnly() {
					continue // never read, so never printed
				}
				c, err := New(gv, &v.Resources[i], opts...)
				if err != nil {
					errs = append(errs, err)
					continue
				}
				out[gv.WithResource(v.Resources[i].Plural)] = c
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// ColumnDefinitions returns the columns of the resource's tables, as a copy.
func (c *Converter) ColumnDefinitions() []metav1.TableColumnDefinition {
	return slices.Clone(c.columns)
}

// Convert makes the table of obj: a list (a k8s.io/api list type or an UnstructuredList), whose
// resourceVersion, continue and remainingItemCount the table takes, or a single object, whose
// resourceVersion it takes, as kube's convertors do. Objects are never modified.
func (c *Converter) Convert(obj runtime.Object, opts Options) (*metav1.Table, error) {
	b, err := c.NewBuilder(opts)
	if err != nil {
		return nil, err
	}
	// An Unstructured is one object even when it has a top-level items array, which would make
	// meta.IsListType take a custom resource for a list.
	if _, single := obj.(*unstructured.Unstructured); !single && meta.IsListType(obj) {
		if err := meta.EachListItem(obj, b.Add); err != nil {
			return nil, err
		}
		lm, err := meta.ListAccessor(obj)
		if err != nil {
			return nil, fmt.Errorf("reading the metadata of a %T: %w", obj, err)
		}
		return b.Finish(metav1.ListMeta{
			ResourceVersion:    lm.GetResourceVersion(),
			Continue:           lm.GetContinue(),
			RemainingItemCount: lm.GetRemainingItemCount(),
		}), nil
	}
	return c.convertObject(b, obj)
}

func (c *Converter) convertObject(b *Builder, obj runtime.Object) (*metav1.Table, error) {
	if err := b.Add(obj); err != nil {
		return nil, err
	}
	m, _ := meta.Accessor(obj) // Add has checked it
	return b.Finish(metav1.ListMeta{ResourceVersion: m.GetResourceVersion()}), nil
}

// Watch converts the objects of one watch stream's events. Like kube, it puts the column definitions
// in the first table it returns only. Watch is not safe for concurrent use: make one per stream.
type Watch struct {
	c    *Converter
	opts Options
	// cells serves every event of the stream: one Watch converts one event at a time, so its
	// JSONPath state is never shared, and the columns are not parsed again for each event.
	cells cellFunc
	sent  bool
}

// Watch starts the tables of a watch stream. Bookmarks are converted too, and a bookmark that marks
// the end of the initial events always carries its metadata, so that the client sees the
// k8s.io/initial-events-end annotation even with includeObject=None.
func (c *Converter) Watch(opts Options) (*Watch, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	cells, err := c.newCells()
	if err != nil {
		return nil, err
	}
	return &Watch{c: c, opts: opts, cells: cells}, nil
}

// Convert returns the one-row table of an event's object. Do not pass the Status of an ERROR event:
// kube sends it as it is.
func (w *Watch) Convert(obj runtime.Object) (*metav1.Table, error) {
	opts := w.opts
	opts.NoHeaders = opts.NoHeaders || w.sent
	t, err := w.c.convertObject(w.c.newBuilder(opts, w.cells), obj)
	if err != nil {
		return nil, err
	}
	w.sent = true
	return t, nil
}

func columnNames(cols []metav1.TableColumnDefinition) string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	return fmt.Sprint(names)
}

func modelColumnNames(cols []routes.PrinterColumn) string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	return fmt.Sprint(names)
}

// sameColumns reports whether the model lists the printer's columns: names, priorities and formats
// in order. Types and descriptions are the printer's own.
func sameColumns(model []routes.PrinterColumn, printer []metav1.TableColumnDefinition) bool {
	return slices.EqualFunc(model, printer, func(m routes.PrinterColumn, p metav1.TableColumnDefinition) bool {
		return m.Name == p.Name && m.Priority == p.Priority && m.Format == p.Format
	})
}
