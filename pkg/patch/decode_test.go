package patch

import (
	"errors"
	"net/http"
	"reflect"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// TestDecodeRunsBeforeTheFieldManager: Request.Decode sees the patched object before its
// managedFields are recorded, so what it brings back (a schema default the patch removed) stays
// owned; its warnings follow the patcher's, its errors are the answer, and an apply, recorded by
// the field manager's Apply, does not go through it.
func TestDecodeRunsBeforeTheFieldManager(t *testing.T) {
	p := testPatcher(t)
	current, err := p.Update(widgets, nil, decode(t, p, widgets,
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"o","namespace":"default","uid":"u1"},"spec":{"size":"small"}}`), "creator")
	if err != nil {
		t.Fatal(err)
	}
	// defaultSize puts back the spec.size a patch removed, as a schema default would.
	var calls int
	defaultSize := func(obj runtime.Object) (runtime.Object, []string, error) {
		calls++
		u := obj.(*unstructured.Unstructured)
		if _, ok, _ := unstructured.NestedString(u.Object, "spec", "size"); !ok {
			if err := unstructured.SetNestedField(u.Object, "small", "spec", "size"); err != nil {
				return nil, nil, err
			}
		}
		return u, []string{"decoded"}, nil
	}
	for _, tt := range []struct {
		name   string
		typ    types.PatchType
		patch  string
		decode func(runtime.Object) (runtime.Object, []string, error)
		// owned is creator's FieldsV1 after the patch; warnings the result's.
		owned    string
		warnings []string
		code     int
		calls    int
	}{
		{
			name: "a merge patch removing the field keeps its owner", typ: types.MergePatchType,
			patch: `{"spec":{"size":null,"replicas":2}}`, decode: defaultSize,
			owned: `{"f:spec":{".":{},"f:replicas":{},"f:size":{}}}`, warnings: []string{"decoded"}, calls: 1,
		},
		{
			name: "a JSON patch removing the field keeps its owner", typ: types.JSONPatchType,
			patch: `[{"op":"remove","path":"/spec/size"}]`, decode: defaultSize,
			owned: `{"f:spec":{".":{},"f:size":{}}}`, warnings: []string{"decoded"}, calls: 1,
		},
		{
			name: "without Decode the field loses its owner", typ: types.MergePatchType,
			patch: `{"spec":{"size":null}}`,
			owned: `{"f:spec":{}}`,
		},
		{
			name: "the error of Decode is the answer", typ: types.MergePatchType, patch: `{"spec":{"size":null}}`,
			decode: func(runtime.Object) (runtime.Object, []string, error) {
				return nil, nil, apierrors.NewBadRequest("bad")
			},
			code: http.StatusBadRequest,
		},
		{
			name: "an error without a status is a 500", typ: types.MergePatchType, patch: `{"spec":{"size":null}}`,
			decode: func(runtime.Object) (runtime.Object, []string, error) { return nil, nil, errors.New("broken") },
			code:   http.StatusInternalServerError,
		},
		{
			name: "an apply does not go through Decode", typ: types.ApplyYAMLPatchType,
			patch:  `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"o"},"spec":{"replicas":3}}`,
			decode: defaultSize,
			owned:  `{"f:spec":{".":{},"f:size":{}}}`,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			calls = 0
			res, err := p.Patch(current, Request{Target: widgets, Type: tt.typ, Namespace: "default", Name: "o",
				Patch: []byte(tt.patch), Options: metav1.PatchOptions{FieldManager: "creator"}, Decode: tt.decode})
			if calls != tt.calls {
				t.Errorf("Decode called %d times, want %d", calls, tt.calls)
			}
			if tt.code != 0 {
				if s := statusOf(t, err); s.Code != int32(tt.code) {
					t.Fatalf("status %d %s, want %d", s.Code, s.Message, tt.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := ownedFields(t, res.Object, "creator", metav1.ManagedFieldsOperationUpdate); got != tt.owned {
				t.Errorf("creator owns %s, want %s", got, tt.owned)
			}
			if !reflect.DeepEqual(res.Warnings, tt.warnings) {
				t.Errorf("warnings %q, want %q", res.Warnings, tt.warnings)
			}
		})
	}
}
