package patch

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// widgetBase is a Widget with a value of every shape its schema has: scalars, a keyed list, an
// atomic list, a map, labels and annotations.
const widgetBase = `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"ns",
"labels":{"app":"a"},"annotations":{"note":"n"}},
"spec":{"replicas":1,"size":"s","parts":[{"name":"p","count":1}],"tags":["x"],"labels":{"k":"v"}}}`

const fastManager = "writer"

// liveWidget is widgetBase created by fastManager through the library and read back as the store
// gives it to an update: JSON, with a uid, a creation time and an aged managedFields time.
func liveWidget(t testing.TB, p *Patcher) *unstructured.Unstructured {
	t.Helper()
	return liveFrom(t, p, widgetBase)
}

// liveUnowned is liveWidget with a field its manager does not own, as a field set by a defaulting
// or a webhook the field manager never saw would be: spec.size, set after the create.
func liveUnowned(t testing.TB, p *Patcher) *unstructured.Unstructured {
	t.Helper()
	withoutSize := decode(t, p, widgets, widgetBase).(*unstructured.Unstructured)
	unstructured.RemoveNestedField(withoutSize.Object, "spec", "size")
	js, err := json.Marshal(withoutSize.Object)
	if err != nil {
		t.Fatal(err)
	}
	live := liveFrom(t, p, string(js))
	if err := unstructured.SetNestedField(live.Object, "s", "spec", "size"); err != nil {
		t.Fatal(err)
	}
	return live
}

func liveFrom(t testing.TB, p *Patcher, doc string) *unstructured.Unstructured {
	t.Helper()
	created, err := p.Update(widgets, nil, decode(t, p, widgets, doc), fastManager)
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(stored(t, created))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(js); err != nil {
		t.Fatal(err)
	}
	u.SetResourceVersion("7")
	return u
}

// sent is what a client sends to update live: the object as read, without managedFields.
func sent(live *unstructured.Unstructured) *unstructured.Unstructured {
	n := live.DeepCopy()
	unstructured.RemoveNestedField(n.Object, "metadata", "managedFields")
	return n
}

func widgetOwnership(t testing.TB, p *Patcher) *ownership {
	t.Helper()
	return ownershipOfTarget(t, p, widgets)
}

// compareObjects runs the fast path and the library on the same update of live and fails if the fast
// path answered differently; it returns whether the fast path answered at all.
func compareObjects(t testing.TB, own *ownership, live, obj runtime.Object, manager string) bool {
	t.Helper()
	fast, ok := own.fastUpdate(live.DeepCopyObject(), obj.DeepCopyObject(), manager, time.Now())
	if !ok {
		return false
	}
	lib, err := own.fields.Update(live.DeepCopyObject(), obj.DeepCopyObject(), manager)
	if err != nil {
		t.Fatalf("the fast path answered an update the library refuses: %v", err)
	}
	lu := asUnstructured(t, live)
	liveTime := lu.GetManagedFields()[0].Time.UTC().Format(time.RFC3339)
	got, want := normalized(t, asUnstructured(t, fast), liveTime), normalized(t, asUnstructured(t, lib), liveTime)
	if got != want {
		t.Errorf("the fast path gave\n%s\nthe library\n%s", got, want)
	}
	return true
}

// normalized is obj's JSON with each managedFields time replaced by "unchanged" when it is the live
// object's, else by "now": the library reads the clock itself.
func normalized(t testing.TB, obj *unstructured.Unstructured, liveTime string) string {
	t.Helper()
	o := obj.DeepCopy()
	entries, _, _ := unstructured.NestedSlice(o.Object, "metadata", "managedFields")
	for _, e := range entries {
		m := e.(map[string]any)
		if m["time"] == liveTime {
			m["time"] = "unchanged"
		} else {
			m["time"] = "now"
		}
	}
	if entries != nil {
		if err := unstructured.SetNestedSlice(o.Object, entries, "metadata", "managedFields"); err != nil {
			t.Fatal(err)
		}
	}
	js, err := json.Marshal(o.Object)
	if err != nil {
		t.Fatal(err)
	}
	return string(js)
}

func TestFastUpdateMatchesLibrary(t *testing.T) {
	p := testPatcher(t)
	own := widgetOwnership(t, p)
	set := func(v any, path ...string) func(map[string]any) {
		return func(o map[string]any) {
			if err := unstructured.SetNestedField(o, v, path...); err != nil {
				panic(err)
			}
		}
	}
	del := func(path ...string) func(map[string]any) {
		return func(o map[string]any) { unstructured.RemoveNestedField(o, path...) }
	}
	tests := []struct {
		name    string
		manager string
		unowned bool // live has a field its manager does not own (liveUnowned)
		change  func(map[string]any)
		fast    bool // the fast path answers
	}{
		{name: "an owned value changed", change: set(int64(2), "spec", "replicas"), fast: true},
		{name: "nothing changed", change: func(map[string]any) {}, fast: true},
		{name: "a label's value changed", change: set("b", "metadata", "labels", "app"), fast: true},
		{name: "an annotation's value changed", change: set("m", "metadata", "annotations", "note"), fast: true},
		{name: "a map's value changed", change: set("w", "spec", "labels", "k"), fast: true},
		{name: "only what is never recorded changed", change: func(o map[string]any) {
			set("9", "metadata", "resourceVersion")(o)
			set(int64(4), "metadata", "generation")(o)
			del("metadata", "uid")(o)
			del("metadata", "creationTimestamp")(o)
		}, fast: true},
		{name: "a label added", change: set("y", "metadata", "labels", "new")},
		{name: "a field removed", change: del("spec", "size")},
		{name: "a field added", change: set("z", "spec", "extra")},
		{name: "a keyed list's item changed", change: set([]any{map[string]any{"name": "p", "count": int64(2)}}, "spec", "parts")},
		{name: "an atomic list changed", change: set([]any{"y"}, "spec", "tags")},
		{name: "a value's type changed", change: set(int64(5), "spec", "size")},
		{name: "a value became null", change: set(nil, "spec", "size")},
		{name: "status changed on the main resource", change: set(int64(3), "status", "replicas")},
		{name: "another manager", manager: "other", change: set(int64(2), "spec", "replicas")},
		{name: "managedFields sent", change: func(o map[string]any) {
			o["metadata"].(map[string]any)["managedFields"] = []any{map[string]any{"manager": "x", "operation": "Update"}}
		}},
		{name: "client-side apply's annotation", change: set("{}", "metadata", "annotations", lastAppliedAnnotation)},
		{name: "finalizers added", change: set([]any{"f"}, "metadata", "finalizers")},
		{name: "a value the manager does not own changed", unowned: true, change: set("l", "spec", "size")},
		{name: "an owned value changed beside one not owned", unowned: true, change: set(int64(2), "spec", "replicas"), fast: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			live := liveWidget(t, p)
			if tt.unowned {
				live = liveUnowned(t, p)
			}
			obj := sent(live)
			tt.change(obj.Object)
			manager := tt.manager
			if manager == "" {
				manager = fastManager
			}
			if answered := compareObjects(t, own, live, obj, manager); answered != tt.fast {
				t.Errorf("fast path answered: %v, want %v", answered, tt.fast)
			}
		})
	}
}

// FuzzFastUpdate changes the live Widget as the input says and holds every update the fast path
// answers to the library's answer.
func FuzzFastUpdate(f *testing.F) {
	for _, seed := range []string{"", "\x00", "\x08\x11", "\x02\x0a\x12", "\x04", "\x05\x06\x07", "\x03\x0b\x13\x1b", "\x80\x09", "\x88\x01"} {
		f.Add([]byte(seed))
	}
	p := testPatcher(f)
	own := widgetOwnership(f, p)
	bases := []*unstructured.Unstructured{liveWidget(f, p), liveUnowned(f, p)}
	f.Fuzz(func(t *testing.T, ops []byte) {
		live := bases[0].DeepCopy()
		if len(ops) > 0 && ops[0]&0x80 != 0 {
			live = bases[1].DeepCopy()
		}
		obj := sent(live)
		o := obj.Object
		for _, b := range ops {
			v := int64(b >> 3)
			s := strconv.FormatInt(v, 10)
			var err error
			switch b & 7 {
			case 0:
				err = unstructured.SetNestedField(o, v, "spec", "replicas")
			case 1:
				err = unstructured.SetNestedField(o, s, "spec", "size")
			case 2:
				err = unstructured.SetNestedField(o, s, "metadata", "labels", "app")
			case 3:
				err = unstructured.SetNestedField(o, s, "metadata", "labels", "l"+strconv.FormatInt(v%2, 10))
			case 4:
				unstructured.RemoveNestedField(o, "spec", "size")
			case 5:
				err = unstructured.SetNestedField(o, []any{map[string]any{"name": "p", "count": v}}, "spec", "parts")
			case 6:
				err = unstructured.SetNestedField(o, v, "status", "replicas")
			case 7:
				err = unstructured.SetNestedField(o, s, "spec", "labels", "k")
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		compareObjects(t, own, live, obj, fastManager)
	})
}

// TestFastUpdateTypedMatchesLibrary holds the fast path to the library on built-in objects: a
// ConfigMap, and a Lease renewed by its holder, the commonest write of a cluster.
func TestFastUpdateTypedMatchesLibrary(t *testing.T) {
	p := testPatcher(t)
	const (
		configMap = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"ns","labels":{"app":"a"}},
"data":{"mode":"fast","region":"eu-west-1"}}`
		lease = `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"l","namespace":"ns"},
"spec":{"holderIdentity":"h1","leaseDurationSeconds":15,"acquireTime":"2024-01-01T00:00:00.000000Z",
"renewTime":"2024-01-01T00:00:00.000000Z","leaseTransitions":0}}`
	)
	set := func(v any, path ...string) func(map[string]any) {
		return func(o map[string]any) {
			if err := unstructured.SetNestedField(o, v, path...); err != nil {
				panic(err)
			}
		}
	}
	tests := []struct {
		name    string
		target  Target
		doc     string
		manager string
		change  func(map[string]any)
		fast    bool
	}{
		{name: "a ConfigMap's value changed", target: configMaps, doc: configMap, change: set("slow", "data", "mode"), fast: true},
		{name: "a ConfigMap unchanged", target: configMaps, doc: configMap, change: func(map[string]any) {}, fast: true},
		{name: "a ConfigMap's label changed", target: configMaps, doc: configMap, change: set("b", "metadata", "labels", "app"), fast: true},
		{name: "a ConfigMap's key added", target: configMaps, doc: configMap, change: set("x", "data", "new")},
		{name: "a ConfigMap made immutable", target: configMaps, doc: configMap, change: set(true, "immutable")},
		{name: "a ConfigMap by another manager", target: configMaps, doc: configMap, manager: "other", change: set("slow", "data", "mode")},
		{name: "a Lease renewed", target: leases, doc: lease, change: set("2024-01-01T00:00:10.000000Z", "spec", "renewTime"), fast: true},
		{name: "a Lease taken over", target: leases, doc: lease, change: func(o map[string]any) {
			set("h2", "spec", "holderIdentity")(o)
			set(int64(1), "spec", "leaseTransitions")(o)
		}, fast: true},
		{name: "a Lease released", target: leases, doc: lease, change: func(o map[string]any) {
			unstructured.RemoveNestedField(o, "spec", "holderIdentity")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			created, err := p.Update(tt.target, nil, decode(t, p, tt.target, tt.doc), fastManager)
			if err != nil {
				t.Fatal(err)
			}
			live := stored(t, created)
			u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(live)
			if err != nil {
				t.Fatal(err)
			}
			unstructured.RemoveNestedField(u, "metadata", "managedFields")
			tt.change(u)
			js, err := json.Marshal(u)
			if err != nil {
				t.Fatal(err)
			}
			obj := decode(t, p, tt.target, string(js))
			manager := tt.manager
			if manager == "" {
				manager = fastManager
			}
			own := ownershipOfTarget(t, p, tt.target)
			if ok := compareObjects(t, own, live, obj, manager); ok != tt.fast {
				t.Fatalf("fast path answered: %v, want %v", ok, tt.fast)
			}
		})
	}
}

func asUnstructured(t testing.TB, obj runtime.Object) *unstructured.Unstructured {
	t.Helper()
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: u}
}
