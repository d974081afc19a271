package patch

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/apictl/apictl/pkg/routes"
)

// libraryPatcher is a Patcher whose field managers type objects with the library's converter as
// it is, without typing.go's shortcuts: what the shortcuts must not change.
var libraryPatcher = sync.OnceValues(func() (*Patcher, error) {
	api, err := routes.LoadAPI([]string{filepath.Join("testdata", "crds")}, nil)
	if err != nil {
		return nil, err
	}
	return newPatcher(api, converters{
		api:  sync.OnceValues(func() (managedfields.TypeConverter, error) { return newTypeConverter(api) }),
		wrap: func(c managedfields.TypeConverter, _ runtime.Object) managedfields.TypeConverter { return c },
	})
})

// TestTypingShortcutsKeepResults runs every case with both Patchers: each step must return the
// same object, managedFields included, and the same errors.
func TestTypingShortcutsKeepResults(t *testing.T) {
	library, err := libraryPatcher()
	if err != nil {
		t.Fatal(err)
	}
	p := testPatcher(t)
	forEachCase(t, func(t *testing.T, _, input, _ string) {
		if got, want := runCase(t, p, input), runCase(t, library, input); got != want {
			t.Errorf("the shortcuts change the result\nwith them:\n%s\nwithout:\n%s", got, want)
		}
	})
}

// TestTypingShortcutsOnStoredObjects creates, updates and applies objects of several kinds, as
// clients do one after the other: from the second write on, the stored object carries one
// managedFields entry per manager.
func TestTypingShortcutsOnStoredObjects(t *testing.T) {
	library, err := libraryPatcher()
	if err != nil {
		t.Fatal(err)
	}
	p := testPatcher(t)
	for i, tc := range []struct {
		target       Target
		object, next string
		apply        string
	}{
		{
			target: configMaps,
			object: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"default","labels":{"x":"1"}},"data":{"k":"v"}}`,
			next:   `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"default","labels":{"x":"2"}},"data":{"k":"v","l":"w"}}`,
			apply:  `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"applied"}}`,
		},
		{
			target: parseTarget(t, "rbac.authorization.k8s.io/v1 roles"),
			object: `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"r","namespace":"default"},` +
				`"rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["get"]}]}`,
			next: `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"r","namespace":"default","annotations":{"a":"b"}},` +
				`"rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["get","list"]},{"apiGroups":["apps"],"resources":["*"],"verbs":["*"]}]}`,
			apply: `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"r"},"rules":[{"apiGroups":[""],"resources":["secrets"],"verbs":["get"]}]}`,
		},
		{
			target: parseTarget(t, "v1 serviceaccounts"),
			object: `{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"s","namespace":"default"},"secrets":[{"name":"a"}]}`,
			next:   `{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"s","namespace":"default"},"secrets":[{"name":"a"},{"name":"b"}],"automountServiceAccountToken":false}`,
			apply:  `{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"s"},"secrets":[{"name":"c"}]}`,
		},
		{
			// A custom resource: the empty object of creates is cached, stored objects are typed as
			// they are.
			target: parseTarget(t, "example.com/v1 widgets"),
			object: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"default"},"spec":{"size":"s","parts":[{"name":"a","count":1}]}}`,
			next:   `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"default"},"spec":{"size":"m","parts":[{"name":"a","count":2},{"name":"b"}]}}`,
			apply:  `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"size":"l"}}`,
		},
		{
			// A part without its key: the library cannot type the new object.
			target: parseTarget(t, "example.com/v1 widgets"),
			object: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"default"},"spec":{"size":"s"}}`,
			next:   `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"default"},"spec":{"size":"m","parts":[{"count":2}]}}`,
			apply:  `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"size":"l"}}`,
		},
	} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			run := func(p *Patcher) string {
				var out strings.Builder
				created, err := p.Update(tc.target, nil, decode(t, p, tc.target, tc.object), "creator")
				if err != nil {
					t.Fatal(err)
				}
				live := stored(t, created)
				for i, manager := range []string{"editor", "other", "editor"} {
					obj, err := p.Update(tc.target, live, decode(t, p, tc.target, tc.next), manager)
					if err != nil {
						t.Fatal(err)
					}
					fmt.Fprintf(&out, "update %d by %s:\n%s", i+1, manager, render(t, obj))
					live = stored(t, obj)
				}
				for _, force := range []bool{false, true} {
					res, err := p.Patch(live, Request{Target: tc.target, Type: types.ApplyYAMLPatchType, Namespace: "default",
						Name: live.(metav1.Object).GetName(), Patch: []byte(tc.apply), Options: metav1.PatchOptions{FieldManager: "applier", Force: &force}})
					if err != nil {
						fmt.Fprintf(&out, "apply force=%t:\n%s", force, renderError(t, err))
						continue
					}
					fmt.Fprintf(&out, "apply force=%t:\n%s", force, render(t, res.Object))
					live = stored(t, res.Object)
				}
				return out.String()
			}
			if got, want := run(p), run(library); got != want {
				t.Errorf("the shortcuts change the result\nwith them:\n%s\nwithout:\n%s", got, want)
			}
		})
	}
}

// TestTypingLeavesObjectsAlone checks that typing a stored object neither modifies it nor keeps
// its shortcut for an object that only looks the same.
func TestTypingLeavesObjectsAlone(t *testing.T) {
	own := configMapOwnership(t)
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Name: "a",
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
			FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:data":{"f:k":{}}}`)}}}, Data: map[string]string{"k": "v"}}
	before := cm.DeepCopy()
	if _, err := own.converter.ObjectToTyped(cm, typed.AllowDuplicates); err != nil {
		t.Fatal(err)
	}
	if !equalJSON(t, cm, before) {
		t.Errorf("typing modified the object: %+v", cm)
	}
	// An empty object of the kind that is not the target's own is typed, not taken from the cache.
	other := own.empty.DeepCopyObject().(*corev1.ConfigMap)
	other.Data = map[string]string{"k": "v"}
	tv, err := own.converter.ObjectToTyped(other, typed.AllowDuplicates)
	if err != nil {
		t.Fatal(err)
	}
	set, err := tv.ToFieldSet()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(set.String(), ".data.k") {
		t.Errorf("typed fields %s: want .data.k", set)
	}
}

// configMapOwnership is the ownership machinery of the shared Patcher's configmaps.
func configMapOwnership(t testing.TB) *ownership {
	t.Helper()
	return ownershipOfTarget(t, testPatcher(t), configMaps)
}

// ownershipOfTarget is the ownership machinery of p's target tgt.
func ownershipOfTarget(t testing.TB, p *Patcher, tgt Target) *ownership {
	t.Helper()
	tg, err := p.target(tgt)
	if err != nil {
		t.Fatal(err)
	}
	own, err := tg.ownershipOf()
	if err != nil {
		t.Fatal(err)
	}
	return own
}

func equalJSON(t *testing.T, a, b any) bool {
	t.Helper()
	ja, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	jb, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(ja) == string(jb)
}

// fieldSetJSONCases are FieldsV1 contents and whether they have the shape the shortcut takes.
var fieldSetJSONCases = []struct {
	raw  string
	want bool
}{
	{`{}`, true},
	{`{"f:data":{".":{},"f:a":{}}}`, true},
	{`{"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{},"f:image":{}}}}}`, true},
	{"{ \"f:a\" : { } , \"f:b\":{}\t}\n ", true},
	{`{"f:\u00e9\n\\\/":{}}`, true},
	{"{\"f:\xff\":{}}", true},
	{` {}`, false}, // the library reads the type from the first byte: a space is a number to it
	{``, false},
	{`null`, false},
	{`123`, false},
	{`"x"`, false},
	{`[]`, false},
	{`{"a":1}`, false},
	{`{"a":[]}`, false},
	{`{"a":"b"}`, false},
	{`{"a":null}`, false},
	{`{"a":{}}x`, false},
	{`{"a":{},}`, false},
	{`{,}`, false},
	{`{"a"}`, false},
	{`{"a":{}`, false},
	{`{"a`, false},
	{"{\"\x01\":{}}", false},
	{`{"\q":{}}`, false},
	{`{"\u12":{}}`, false},
	{`{"\u12g4":{}}`, false},
	{`{a:{}}`, false},
	{strings.Repeat(`{"a":`, maxFieldSetDepth+2) + `{}` + strings.Repeat(`}`, maxFieldSetDepth+2), false},
	{strings.Repeat(`{"a":`, maxFieldSetDepth) + `{}` + strings.Repeat(`}`, maxFieldSetDepth), true},
}

func TestIsFieldSetJSON(t *testing.T) {
	for _, tc := range fieldSetJSONCases {
		if got := isFieldSetJSON([]byte(tc.raw)); got != tc.want {
			t.Errorf("isFieldSetJSON(%q) = %t, want %t", tc.raw, got, tc.want)
		}
	}
}

// FuzzIsFieldSetJSON checks the promise the shortcut rests on: a FieldsV1 isFieldSetJSON accepts
// is one the library types without error (or panic).
func FuzzIsFieldSetJSON(f *testing.F) {
	for _, tc := range fieldSetJSONCases {
		f.Add([]byte(tc.raw))
	}
	converter := configMapOwnership(f).converter.(*typeConverter).TypeConverter
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !isFieldSetJSON(raw) {
			return
		}
		if !json.Valid(raw) {
			t.Fatalf("%q accepted but not JSON", raw)
		}
		cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Name: "a",
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(string(raw))}}}}
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("%q accepted but the library panics typing it: %v", raw, r)
			}
		}()
		if _, err := converter.ObjectToTyped(cm, typed.AllowDuplicates); err != nil {
			t.Fatalf("%q accepted but the library cannot type it: %v", raw, err)
		}
	})
}
