package tables

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Builder makes one table a row at a time, so that a list can be converted while it is read from
// storage, without first holding every object in a list. It is not safe for concurrent use.
type Builder struct {
	c     *Converter
	opts  Options
	cells cellFunc
	now   metav1.Time
	table *metav1.Table
	done  bool
}

// NewBuilder starts a table with opts, reading the converter's clock once for all of its rows. It
// returns a 400 StatusError for an invalid includeObject and a 406 for an unknown Table version.
func (c *Converter) NewBuilder(opts Options) (*Builder, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	cells, err := c.newCells()
	if err != nil {
		return nil, err
	}
	return c.newBuilder(opts, cells), nil
}

// newBuilder starts a table with opts, already checked, whose rows cells makes.
func (c *Converter) newBuilder(opts Options, cells cellFunc) *Builder {
	t := &metav1.Table{TypeMeta: metav1.TypeMeta{Kind: "Table", APIVersion: opts.apiVersion()}}
	if !opts.NoHeaders {
		t.ColumnDefinitions = slices.Clone(c.columns)
	}
	if !c.nullEmpty {
		t.Rows = []metav1.TableRow{}
	}
	return &Builder{c: c, opts: opts, cells: cells, now: metav1.NewTime(c.now()), table: t}
}

// Add appends obj's row: a pointer to the resource's k8s.io/api type, or an Unstructured. obj is not
// modified, and the row may share obj's maps and slices: do not change obj until the table is
// written.
func (b *Builder) Add(obj runtime.Object) error {
	if b.done {
		return errors.New("adding a row to a finished table")
	}
	row, err := b.row(obj)
	if err != nil {
		return err
	}
	b.table.Rows = append(b.table.Rows, row)
	return nil
}

// row is obj's row.
func (b *Builder) row(obj runtime.Object) (metav1.TableRow, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return metav1.TableRow{}, fmt.Errorf("converting a %T to a row of %s: %w", obj, b.c.resource, err)
	}
	cells, err := b.cells(obj, m, b.now.Time)
	if err != nil {
		return metav1.TableRow{}, fmt.Errorf("converting %s %q to a table row: %w", b.c.resource, m.GetName(), err)
	}
	row := metav1.TableRow{Cells: cells}
	row.Object.Object = b.rowObject(obj, m)
	return row, nil
}

// ListFrame and AppendRow write a list's table a row at a time, for a LIST that streams: the JSON of
// the whole table is head, then the rows' array, then tail, as json.Marshal of Finish's table would
// write it. emptyRows is the array of a table with no row.
func (b *Builder) ListFrame(list metav1.ListMeta) (head, tail []byte, emptyRows string, err error) {
	t := *b.table
	t.ListMeta = list
	t.Rows = []metav1.TableRow{}
	whole, err := json.Marshal(&t)
	if err != nil {
		return nil, nil, "", fmt.Errorf("encoding the table of %s: %w", b.c.resource, err)
	}
	const rows = `,"rows":[]}`
	if !bytes.HasSuffix(whole, []byte(rows)) {
		return nil, nil, "", fmt.Errorf("encoding the table of %s: its rows are not last in %s", b.c.resource, whole)
	}
	emptyRows = "[]"
	if b.c.nullEmpty {
		emptyRows = "null"
	}
	return whole[:len(whole)-len(rows)+len(`,"rows":`)], []byte("}"), emptyRows, nil
}

// AppendRow appends the JSON of obj's row to dst.
func (b *Builder) AppendRow(dst []byte, obj runtime.Object) ([]byte, error) {
	row, err := b.row(obj)
	if err != nil {
		return dst, err
	}
	enc, err := json.Marshal(&row)
	if err != nil {
		return dst, fmt.Errorf("encoding a table row of %s: %w", b.c.resource, err)
	}
	return append(dst, enc...), nil
}

// Finish returns the table with list's resourceVersion, continue and remainingItemCount. The
// Builder is done: Add fails after it.
func (b *Builder) Finish(list metav1.ListMeta) *metav1.Table {
	b.done = true
	b.table.ListMeta = list
	return b.table
}

// rowObject is what the row carries per includeObject. The end-of-initial-events bookmark carries
// its metadata unless the whole object was asked for, as in kube.
func (b *Builder) rowObject(obj runtime.Object, m metav1.Object) runtime.Object {
	switch b.opts.IncludeObject {
	case metav1.IncludeObject:
		return b.wholeObject(obj)
	case metav1.IncludeNone:
		if m.GetAnnotations()[metav1.InitialEventsAnnotationKey] != "true" {
			return nil
		}
	}
	p := meta.AsPartialObjectMetadata(m)
	p.TypeMeta = metav1.TypeMeta{Kind: "PartialObjectMetadata", APIVersion: b.opts.apiVersion()}
	return p
}

// wholeObject returns obj with the resource's apiVersion and kind, which objects decoded into a
// k8s.io/api type often lack; the caller's object is copied rather than changed.
func (b *Builder) wholeObject(obj runtime.Object) runtime.Object {
	if obj.GetObjectKind().GroupVersionKind() == b.c.gvk {
		return obj
	}
	cp := obj.DeepCopyObject()
	cp.GetObjectKind().SetGroupVersionKind(b.c.gvk)
	return cp
}
