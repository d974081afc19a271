package handlers

import (
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/apictl/apictl/pkg/registry"
	"github.com/apictl/apictl/pkg/routes"
	"github.com/apictl/apictl/pkg/storage"
)

// selectable is what a list or watch can select an object by: its labels and the fields kube makes
// selectable for its kind.
type selectable struct {
	Metadata struct {
		Name      string            `json:"name"`
		Namespace string            `json:"namespace"`
		Labels    map[string]string `json:"labels"`
	} `json:"metadata"`
	// Secret
	Type string `json:"type"`
	// Namespace
	Status struct {
		Phase string `json:"phase"`
	} `json:"status"`
	// Event
	InvolvedObject struct {
		Kind            string `json:"kind"`
		Namespace       string `json:"namespace"`
		Name            string `json:"name"`
		UID             string `json:"uid"`
		APIVersion      string `json:"apiVersion"`
		ResourceVersion string `json:"resourceVersion"`
		FieldPath       string `json:"fieldPath"`
	} `json:"involvedObject"`
	Reason string `json:"reason"`
	Source struct {
		Component string `json:"component"`
	} `json:"source"`
	ReportingComponent string `json:"reportingComponent"`
}

// fieldSet returns the selectable fields of kind, as kube's field label conversions define them.
func fieldSet(kind string, namespaced bool, o *selectable) fields.Set {
	set := fields.Set{"metadata.name": o.Metadata.Name}
	if namespaced {
		set["metadata.namespace"] = o.Metadata.Namespace
	}
	switch kind {
	case "Secret":
		set["type"] = o.Type
	case "Namespace":
		set["status.phase"] = o.Status.Phase
	case "Event":
		set["involvedObject.kind"] = o.InvolvedObject.Kind
		set["involvedObject.namespace"] = o.InvolvedObject.Namespace
		set["involvedObject.name"] = o.InvolvedObject.Name
		set["involvedObject.uid"] = o.InvolvedObject.UID
		set["involvedObject.apiVersion"] = o.InvolvedObject.APIVersion
		set["involvedObject.resourceVersion"] = o.InvolvedObject.ResourceVersion
		set["involvedObject.fieldPath"] = o.InvolvedObject.FieldPath
		set["reason"] = o.Reason
		set["reportingComponent"] = o.ReportingComponent
		// Events of the newer API have no source: kube selects them by their reporting controller.
		set["source"] = o.Source.Component
		if set["source"] == "" {
			set["source"] = o.ReportingComponent
		}
		set["type"] = o.Type
	}
	return set
}

// fieldFilter is how a resource's lists and watches select its objects, made once when the resource
// is installed: kube's field label conversion (check) and its strategies' GetAttrs (filter, selection).
type fieldFilter struct {
	// kind names the kind whose fields objects are selected by: the stored objects' for a resource
	// stored as another kind (stored); routeKind is the route's, whose field labels a check names.
	kind, routeKind string
	namespaced      bool
	// notSupported is set for the kinds whose field label conversion refuses an unknown field as "field
	// label not supported" rather than listing the metadata fields.
	notSupported bool
	// selectable are a custom resource's selectable fields.
	selectable []selectableField
	stored     *registry.StoredForm
}

func newFieldFilter(res *routes.Resource, stored *registry.StoredForm) *fieldFilter {
	f := &fieldFilter{kind: res.Kind, routeKind: res.Kind, namespaced: res.Namespaced, stored: stored,
		selectable: newSelectableFields(res.SelectableFields)}
	// kube's custom resource converter words it so, selectable fields or not, and so do the field label
	// conversions of built-in kinds with fields of their own.
	switch {
	case res.Custom || len(res.SelectableFields) > 0:
		f.notSupported = true
	case res.Kind == "Secret" || res.Kind == "Namespace" || res.Kind == "Event":
		f.notSupported = true
	}
	if stored != nil {
		f.kind = stored.GVK.Kind
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
	known := fieldSet(ff.routeKind, ff.namespaced, &selectable{})
	for _, f := range ff.selectable {
		known[f.name] = ""
	}
	for _, r := range sel.Requirements() {
		if _, ok := known[r.Field]; ok {
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
// for all the watchers of the resource with selectReader. It is nil when the selectors select
// everything, and for selectors on a custom resource's selectable fields, which filter reads alone.
func (ff *fieldFilter) selection(l labels.Selector, f fields.Selector) *storage.SharedFilter {
	if l.Empty() && f.Empty() || len(ff.selectable) > 0 && selectsCustomFields(f) {
		return nil
	}
	kind, namespaced := ff.kind, ff.namespaced
	if ff.stored != nil {
		if mapped, err := storedFieldSelector(ff.stored, f); err == nil {
			f = mapped
		}
	}
	return &storage.SharedFilter{Reader: selectReader, Match: func(read any) bool {
		o := read.(*selectable)
		if !l.Matches(labels.Set(o.Metadata.Labels)) {
			return false
		}
		return f.Empty() || f.Matches(fieldSet(kind, namespaced, o))
	}}
}

// selectReader reads what built-in selectors match: labels and the selectable fields of every
// built-in kind (selectable). The reading does not depend on the kind (Match picks the fields), so
// one Reader, never modified, serves every scope and every watch shares it.
var selectReader = &storage.Reader{Read: func(kv storage.KeyValue) (any, error) {
	o := new(selectable)
	if err := json.Unmarshal(kv.Value, o); err != nil {
		return nil, fmt.Errorf("reading the labels of %s: %w", kv.Key, err)
	}
	return o, nil
}}
