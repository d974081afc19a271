package patch

import (
	"encoding/json"
	"reflect"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// The field manager's answer to the commonest update, found without typing either object: an update
// (PUT, or a patch) by the one manager that wrote the object so far, which changes values that
// manager owns and adds or removes nothing. Structured-merge-diff would type both objects against the
// schema, compare them, take the changed fields from every manager that owns them and give them to
// the writer: with one manager, that is its own set again, so the entry stays as it is and only its
// time moves to now (it stays when nothing changed). Typing and comparing the two objects is most of
// an update's bookkeeping (BenchmarkUpdateCustom: 50 µs by the library, 4.4 µs here). The walk
// answers the same without a schema, because in the one case it accepts the schema cannot matter:
// every changed value is a scalar at a path the manager's fieldsV1 holds as a member, and no list
// changed at all. Built-in objects are walked in their unstructured form (Lease renewals by their
// holder land here). Everything else — another manager or a second entry, managedFields sent by the
// client, a field added or removed, a list changed, a value whose JSON type changed, a value the
// manager does not own, a change under a field the target resets (status on the main resource), a
// subresource — goes to the library. TestFastUpdateMatchesLibrary, TestFastUpdateTypedMatchesLibrary
// and FuzzFastUpdate hold it to the library's output.

// strippedMeta are the metadata fields the field manager never records (its stripMetaManager), which
// a write may change freely.
var strippedMeta = map[string]bool{
	"name": true, "namespace": true, "creationTimestamp": true, "selfLink": true, "uid": true,
	"clusterName": true, "generation": true, "managedFields": true, "resourceVersion": true,
}

// entryKeys are the keys of a managedFields entry as the library writes it for an update of the
// main resource; an entry with any other key (or without one of these) goes to the library, which
// would rewrite it.
var entryKeys = map[string]bool{"manager": true, "operation": true, "apiVersion": true, "time": true, "fieldsType": true, "fieldsV1": true}

// lastAppliedAnnotation is kubectl's client-side apply annotation, which the library keeps in step
// with server-side apply; an object carrying it goes to the library.
const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// fastUpdate returns obj with the managedFields the library would give it, and true, when the write
// is the one case above; otherwise obj untouched and false. now is the time a changed entry takes.
func (o *ownership) fastUpdate(live, obj runtime.Object, manager string, now time.Time) (runtime.Object, bool) {
	if o.subresource != "" || !o.ofTarget(obj) {
		return obj, false
	}
	lu, ok := live.(*unstructured.Unstructured)
	if !ok {
		return o.fastUpdateTyped(live, obj, manager, now)
	}
	nu, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, false
	}
	lmeta, _ := lu.Object["metadata"].(map[string]any)
	nmeta, _ := nu.Object["metadata"].(map[string]any)
	if lmeta == nil || nmeta == nil || hasLastApplied(lmeta) || hasLastApplied(nmeta) {
		return obj, false
	}
	if sent, ok := nmeta["managedFields"]; ok {
		if l, isList := sent.([]any); !isList || len(l) > 0 {
			return obj, false
		}
	}
	entries, _ := lmeta["managedFields"].([]any)
	if len(entries) != 1 {
		return obj, false
	}
	entry, _ := entries[0].(map[string]any)
	owned, ok := o.soleEntry(entry, manager)
	if !ok {
		return obj, false
	}
	changed, ok := o.sameShape(lu.Object, nu.Object, owned, levelTop)
	if !ok {
		return obj, false
	}
	out := make(map[string]any, len(entry))
	for k, v := range entry {
		out[k] = v
	}
	// The entry is the new object's from now on: nothing of it may be shared with the live one.
	out["fieldsV1"] = runtime.DeepCopyJSONValue(owned)
	if changed {
		out["time"] = now.UTC().Format(time.RFC3339)
	}
	nmeta["managedFields"] = []any{out}
	return obj, true
}

// ofTarget says whether the library takes obj as an object of the target's kind and version: a
// custom object must name them, a built-in one may name neither, and anything else it refuses.
func (o *ownership) ofTarget(obj runtime.Object) bool {
	gvk := obj.GetObjectKind().GroupVersionKind()
	if _, custom := obj.(*unstructured.Unstructured); !custom && gvk.Empty() {
		return true
	}
	return gvk.GroupVersion().String() == o.apiVersion && gvk.Kind == o.kind
}

// fastUpdateTyped is fastUpdate for built-in objects: the same walk over both objects in their
// unstructured form, and the live entry, its time moved if a value changed, set on obj.
func (o *ownership) fastUpdateTyped(live, obj runtime.Object, manager string, now time.Time) (runtime.Object, bool) {
	lm, err := meta.Accessor(live)
	if err != nil {
		return obj, false
	}
	nm, err := meta.Accessor(obj)
	if err != nil || len(nm.GetManagedFields()) > 0 || lm.GetAnnotations()[lastAppliedAnnotation] != "" || nm.GetAnnotations()[lastAppliedAnnotation] != "" {
		return obj, false
	}
	entries := lm.GetManagedFields()
	if len(entries) != 1 {
		return obj, false
	}
	e := entries[0]
	if e.Manager != manager || e.Operation != metav1.ManagedFieldsOperationUpdate || e.APIVersion != o.apiVersion ||
		e.Subresource != "" || e.FieldsType != "FieldsV1" || e.FieldsV1 == nil || e.Time == nil {
		return obj, false
	}
	var owned map[string]any
	if err := json.Unmarshal(e.FieldsV1.GetRawBytes(), &owned); err != nil || owned == nil {
		return obj, false
	}
	lu, err := runtime.DefaultUnstructuredConverter.ToUnstructured(live)
	if err != nil {
		return obj, false
	}
	nu, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return obj, false
	}
	changed, ok := o.sameShape(lu, nu, owned, levelTop)
	if !ok {
		return obj, false
	}
	e.FieldsV1 = e.FieldsV1.DeepCopy()
	if changed {
		e.Time = &metav1.Time{Time: now.UTC()}
	}
	nm.SetManagedFields([]metav1.ManagedFieldsEntry{e})
	return obj, true
}

// soleEntry returns the fields of entry when it is manager's update entry of this target's version,
// written as the library writes it.
func (o *ownership) soleEntry(entry map[string]any, manager string) (map[string]any, bool) {
	if len(entry) != len(entryKeys) {
		return nil, false
	}
	for k := range entry {
		if !entryKeys[k] {
			return nil, false
		}
	}
	if entry["manager"] != manager || entry["operation"] != "Update" || entry["apiVersion"] != o.apiVersion || entry["fieldsType"] != "FieldsV1" {
		return nil, false
	}
	// A time the library would write differently (fractions, another zone) goes to the library.
	at, _ := entry["time"].(string)
	if t, err := time.Parse(time.RFC3339, at); err != nil || t.UTC().Format(time.RFC3339) != at {
		return nil, false
	}
	owned, ok := entry["fieldsV1"].(map[string]any)
	return owned, ok
}

func hasLastApplied(meta map[string]any) bool {
	annotations, _ := meta["annotations"].(map[string]any)
	_, ok := annotations[lastAppliedAnnotation]
	return ok
}

// level is where sameShape walks: the object's top, its metadata, or below.
type level int

const (
	levelTop level = iota
	levelMeta
	levelBelow
)

// sameShape compares the maps l (live) and n (new) whose fields owned describes (nil when the
// manager owns nothing there). ok is false when the write is not the fast path's case; changed says
// whether a value changed.
func (o *ownership) sameShape(l, n map[string]any, owned map[string]any, at level) (changed, ok bool) {
	// Every field of either object is in the other, but those nobody records.
	for k := range n {
		if _, present := l[k]; !present && !unrecorded(k, at) {
			return false, false
		}
	}
	for k, lv := range l {
		if unrecorded(k, at) {
			continue
		}
		nv, present := n[k]
		if !present {
			return false, false
		}
		if at == levelTop && o.resets[k] {
			// The library takes a changed reset field from its owner even though nobody gains it.
			if !reflect.DeepEqual(lv, nv) {
				return false, false
			}
			continue
		}
		child, _ := owned["f:"+k].(map[string]any)
		next := levelBelow
		if at == levelTop && k == "metadata" {
			next = levelMeta
		}
		c, ok := o.sameValue(lv, nv, child, next)
		if !ok {
			return false, false
		}
		changed = changed || c
	}
	return changed, true
}

// unrecorded says whether the field k, at, is one the field manager never records: the object's
// apiVersion and kind (the target's, checked before: ofTarget) and the stripped metadata.
func unrecorded(k string, at level) bool {
	switch at {
	case levelTop:
		return k == "apiVersion" || k == "kind"
	case levelMeta:
		return strippedMeta[k]
	}
	return false
}

// sameValue compares one value of both objects, as sameShape does; owned is the value's own node.
func (o *ownership) sameValue(lv, nv any, owned map[string]any, at level) (changed, ok bool) {
	switch l := lv.(type) {
	case map[string]any:
		n, isMap := nv.(map[string]any)
		if !isMap {
			return false, false
		}
		return o.sameShape(l, n, owned, at)
	case []any:
		// A list's members depend on its schema (keys, sets, atomic): only an unchanged one is
		// known to leave every set as it is.
		return false, reflect.DeepEqual(lv, nv)
	case string, bool, int64, float64, nil:
		if !sameScalarType(lv, nv) {
			return false, false
		}
		if lv == nv {
			return false, true
		}
		// A changed value: the manager must own it as a member of its set.
		return true, owned != nil && (len(owned) == 0 || owned["."] != nil)
	default:
		return false, false
	}
}

// sameScalarType says whether two JSON scalars have the same Go type (1 and 1.0 do not: the
// library compares them as numbers).
func sameScalarType(a, b any) bool {
	k := scalarKind(a)
	return k != "" && k == scalarKind(b)
}

// scalarKind names the Go type of a JSON scalar of an unstructured object, "" for anything else.
func scalarKind(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case bool:
		return "bool"
	case int64:
		return "integer"
	case float64:
		return "float"
	case nil:
		return "null"
	}
	return ""
}
