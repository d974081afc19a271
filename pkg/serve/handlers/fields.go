package handlers

import (
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/apictl/apictl/pkg/kinds"
	"github.com/apictl/apictl/pkg/routes"
	"github.com/apictl/apictl/pkg/storage"
)

// fieldSet returns what an object's fields selectors select by: metadata.name, metadata.namespace
// when the kind is namespaced, and the kind's own fields (kinds.FieldSelectors).
func fieldSet(namespaced bool, o kinds.FieldReading) fields.Set {
	m := o.Meta()
	set := fields.Set{"metadata.name": m.Metadata.Name}
	if namespaced {
		set["metadata.namespace"] = m.Metadata.Namespace
	}
	o.AddFields(set)
	return set
}

// metaReading is the reading of a kind with no selectable fields of its own.
type metaReading struct{ kinds.SelectableMeta }

func (*metaReading) AddFields(fields.Set) {}

// fieldFilter is how a resource's lists and watches select its objects, made once when the resource
// is installed: kube's field label conversion (check) and its strategies' GetAttrs (filter, selection).
type fieldFilter struct {
	namespaced bool
	// own are the stored kind's selectable fields beyond metadata; nil for none.
	own *kinds.FieldSelectors
	// notSupported is set for the kinds whose field label conversion refuses an unknown field as "field
	// label not supported" rather than listing the metadata fields.
	notSupported bool
	// selectable are a custom resource's selectable fields.
	selectable []selectableField
	stored     *kinds.StoredForm
	// reader reads what the selectors of every list and watch of the resource match.
	reader *storage.Reader
}

// newFieldFilter makes the filter of res, whose stored objects are selected by own (the stored
// kind's fields for a resource stored as another's).
func newFieldFilter(res *routes.Resource, stored *kinds.StoredForm, own *kinds.FieldSelectors) *fieldFilter {
	f := &fieldFilter{namespaced: res.Namespaced, own: own, stored: stored,
		selectable: newSelectableFields(res.SelectableFields), reader: metaReader}
	// kube's custom resource converter words it so, selectable fields or not, and so do the field label
	// conversions of built-in kinds with fields of their own.
	f.notSupported = res.Custom || len(res.SelectableFields) > 0 || own != nil
	if own != nil {
		f.reader = &storage.Reader{Read: func(kv storage.KeyValue) (any, error) {
			return readSelectable(kv, own.New())
		}}
	}
	return f
}

// check refuses fields the kind cannot be selected by, with kube's messages: kinds with their own
// field labels say "field label not supported", the others list the metadata fields.
func (ff *fieldFilter) check(sel fields.Selector) error {
	if sel.Empty() {
		return nil
	}
	if ff.stored != nil {
		_, err := storedFieldSelector(ff.stored, sel)
		return err
	}
	known := map[string]bool{"metadata.name": true, "metadata.namespace": ff.namespaced}
	if ff.own != nil {
		for _, name := range ff.own.Names {
			known[name] = true
		}
	}
	for _, f := range ff.selectable {
		known[f.name] = true
	}
	for _, r := range sel.Requirements() {
		if known[r.Field] {
			continue
		}
		if ff.notSupported {
			return apierrors.NewBadRequest(fmt.Sprintf("field label not supported: %s", r.Field))
		}
		return apierrors.NewBadRequest(fmt.Sprintf("%q is not a known field selector: only \"metadata.name\", \"metadata.namespace\"", r.Field))
	}
	return nil
}

// filter returns the storage filter for the selectors, nil when they select everything, so that the
// store can stream values without looking into them.
func (ff *fieldFilter) filter(l labels.Selector, f fields.Selector) storage.Filter {
	if len(ff.selectable) > 0 && selectsCustomFields(f) {
		return customFilter(ff.namespaced, ff.selectable, l, f)
	}
	return ff.selection(l, f).Filter()
}

// selection is filter for a watch, as a storage.SharedFilter: the watch cache reads each change once
// for all the watchers of the resource with the resource's reader. It is nil when the selectors
// select everything, and for selectors on a custom resource's selectable fields, which filter reads
// alone.
func (ff *fieldFilter) selection(l labels.Selector, f fields.Selector) *storage.SharedFilter {
	if l.Empty() && f.Empty() || len(ff.selectable) > 0 && selectsCustomFields(f) {
		return nil
	}
	namespaced := ff.namespaced
	if ff.stored != nil {
		if mapped, err := storedFieldSelector(ff.stored, f); err == nil {
			f = mapped
		}
	}
	return &storage.SharedFilter{Reader: ff.reader, Match: func(read any) bool {
		o := read.(kinds.FieldReading)
		if !l.Matches(labels.Set(o.Meta().Metadata.Labels)) {
			return false
		}
		return f.Empty() || f.Matches(fieldSet(namespaced, o))
	}}
}

// metaReader reads what the selectors of a kind without fields of its own match: labels, name and
// namespace. The reading does not depend on the kind, so one Reader, never modified, serves every
// such scope and every watch shares it.
var metaReader = &storage.Reader{Read: func(kv storage.KeyValue) (any, error) {
	return readSelectable(kv, new(metaReading))
}}

func readSelectable(kv storage.KeyValue, o kinds.FieldReading) (kinds.FieldReading, error) {
	if err := json.Unmarshal(kv.Value, o); err != nil {
		return nil, fmt.Errorf("reading the labels of %s: %w", kv.Key, err)
	}
	return o, nil
}

// storedFieldSelector maps a field selector on the route's fields to the stored kind's, which the
// filter reads from stored objects. The kind's field label conversion refuses what it does not map,
// with kube's message.
func storedFieldSelector(stored *kinds.StoredForm, sel fields.Selector) (fields.Selector, error) {
	if sel.Empty() {
		return sel, nil
	}
	out, err := sel.Transform(func(field, value string) (string, string, error) {
		mapped, ok := stored.FieldLabels[field]
		if !ok {
			return "", "", fmt.Errorf("field label not supported: %s", field)
		}
		return mapped, value, nil
	})
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	return out, nil
}
