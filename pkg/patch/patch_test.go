package patch

import (
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

var (
	configMaps   = Target{Resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}}
	secrets      = Target{Resource: schema.GroupVersionResource{Version: "v1", Resource: "secrets"}}
	leases       = Target{Resource: schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}}
	roleBindings = Target{Resource: schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"}}
	widgets      = Target{Resource: schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}}
)

// statusOf returns the Status of a patch error, failing the test for anything else.
func statusOf(t *testing.T, err error) metav1.Status {
	t.Helper()
	if err == nil {
		t.Fatal("want an error, got none")
	}
	s, ok := err.(apierrors.APIStatus)
	if !ok {
		t.Fatalf("error %v (%T) is not a StatusError", err, err)
	}
	return s.Status()
}

// valueAt reads a value of a patched object by path, through its JSON.
func valueAt(t *testing.T, obj runtime.Object, path ...string) any {
	t.Helper()
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	var v any = u
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

// TestEveryPatchTypeOnEveryKind patches one field of each kind with each patch type, checks the
// result and that the stored object was left alone, and that the manager owns what it changed.
func TestEveryPatchTypeOnEveryKind(t *testing.T) {
	p := testPatcher(t)
	kinds := []struct {
		name    string
		target  Target
		ns      string
		current string
		// path is the field every patch sets to value; apply holds the configuration an apply sends.
		path  []string
		value any
		patch map[types.PatchType]string
		// owns is the field the patcher comes to own, when not path's last: the struct that holds
		// it, for a struct kube tracks as one value.
		owns string
	}{
		{
			name: "ConfigMap", target: configMaps, ns: "default",
			current: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"o","namespace":"default","uid":"u1"},"data":{"k":"old"}}`,
			path:    []string{"data", "k"}, value: "new",
			patch: map[types.PatchType]string{
				types.JSONPatchType:           `[{"op":"replace","path":"/data/k","value":"new"}]`,
				types.MergePatchType:          `{"data":{"k":"new"}}`,
				types.StrategicMergePatchType: `{"data":{"k":"new"}}`,
				types.ApplyYAMLPatchType:      `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"o"},"data":{"k":"new"}}`,
			},
		},
		{
			name: "Secret", target: secrets, ns: "default",
			current: `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"o","namespace":"default","uid":"u1"},"type":"Opaque","data":{"k":"b2xk"}}`,
			path:    []string{"data", "k"}, value: "bmV3",
			patch: map[types.PatchType]string{
				types.JSONPatchType:           `[{"op":"replace","path":"/data/k","value":"bmV3"}]`,
				types.MergePatchType:          `{"data":{"k":"bmV3"}}`,
				types.StrategicMergePatchType: `{"data":{"k":"bmV3"}}`,
				types.ApplyYAMLPatchType:      `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"o"},"data":{"k":"bmV3"}}`,
			},
		},
		{
			name: "Lease", target: leases, ns: "default",
			current: `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"o","namespace":"default","uid":"u1"},"spec":{"holderIdentity":"a","leaseDurationSeconds":15}}`,
			path:    []string{"spec", "holderIdentity"}, value: "b",
			patch: map[types.PatchType]string{
				types.JSONPatchType:           `[{"op":"replace","path":"/spec/holderIdentity","value":"b"}]`,
				types.MergePatchType:          `{"spec":{"holderIdentity":"b"}}`,
				types.StrategicMergePatchType: `{"spec":{"holderIdentity":"b"}}`,
				types.ApplyYAMLPatchType:      `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"o"},"spec":{"holderIdentity":"b"}}`,
			},
		},
		{
			name: "RoleBinding", target: roleBindings, ns: "default",
			current: `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"o","namespace":"default","uid":"u1"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"r"},"subjects":[{"kind":"User","name":"ann"}]}`,
			path:    []string{"roleRef", "name"}, value: "s", owns: "roleRef", // kube's RoleRef is atomic
			patch: map[types.PatchType]string{
				types.JSONPatchType:           `[{"op":"replace","path":"/roleRef/name","value":"s"}]`,
				types.MergePatchType:          `{"roleRef":{"name":"s"}}`,
				types.StrategicMergePatchType: `{"roleRef":{"name":"s"}}`,
				types.ApplyYAMLPatchType:      `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"o"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"s"}}`,
			},
		},
		{
			name: "Widget", target: widgets, ns: "default",
			current: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"o","namespace":"default","uid":"u1"},"spec":{"size":"small","replicas":1}}`,
			path:    []string{"spec", "size"}, value: "large",
			patch: map[types.PatchType]string{
				types.JSONPatchType:           `[{"op":"replace","path":"/spec/size","value":"large"}]`,
				types.MergePatchType:          `{"spec":{"size":"large"}}`,
				types.StrategicMergePatchType: `{"spec":{"size":"large"}}`,
				types.ApplyYAMLPatchType:      `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"o"},"spec":{"size":"large"}}`,
			},
		},
	}
	for _, k := range kinds {
		for _, typ := range []types.PatchType{types.JSONPatchType, types.MergePatchType, types.StrategicMergePatchType, types.ApplyYAMLPatchType} {
			t.Run(k.name+"/"+string(typ), func(t *testing.T) {
				// The object was created by "creator", so it has managedFields, as every object the
				// server stores does.
				current, err := p.Update(k.target, nil, decode(t, p, k.target, k.current), "creator")
				if err != nil {
					t.Fatal(err)
				}
				before := current.DeepCopyObject()
				opts := metav1.PatchOptions{FieldManager: "tester"}
				if typ == types.ApplyYAMLPatchType {
					// creator owns the field.
					force := true
					opts.Force = &force
				}
				res, err := p.Patch(current, Request{Target: k.target, Type: typ, Namespace: k.ns, Name: "o", Patch: []byte(k.patch[typ]), Options: opts})
				if !reflect.DeepEqual(current, before) {
					t.Errorf("the current object changed:\n%s\nwas:\n%s", render(t, current), render(t, before))
				}
				if k.target == widgets && typ == types.StrategicMergePatchType {
					if s := statusOf(t, err); s.Code != http.StatusUnsupportedMediaType {
						t.Fatalf("strategic merge patch on a custom resource: %d %s, want 415", s.Code, s.Message)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if got := valueAt(t, res.Object, k.path...); got != k.value {
					t.Errorf("%s = %v, want %v", strings.Join(k.path, "."), got, k.value)
				}
				if res.Created {
					t.Error("Created for an object that exists")
				}
				op := metav1.ManagedFieldsOperationUpdate
				if typ == types.ApplyYAMLPatchType {
					op = metav1.ManagedFieldsOperationApply
				}
				owned := ownedFields(t, res.Object, "tester", op)
				field := k.owns
				if field == "" {
					field = k.path[len(k.path)-1]
				}
				if leaf := `"f:` + field + `"`; !strings.Contains(owned, leaf) {
					t.Errorf("tester/%s owns %s, want it to own %s", op, owned, leaf)
				}
				if gvk := res.Object.GetObjectKind().GroupVersionKind(); gvk.Empty() {
					t.Error("the result has no apiVersion and kind")
				}
			})
		}
	}
}

// TestApplyConflicts: two managers, a 409 naming the other manager and the field with kube's
// message and causes, force moving the field, and managedFields recording the result.
func TestApplyConflicts(t *testing.T) {
	p := testPatcher(t)
	apply := func(current runtime.Object, manager string, force bool, data string) (*Result, error) {
		return p.Patch(current, Request{Target: configMaps, Type: types.ApplyYAMLPatchType, Namespace: "default", Name: "cm",
			Patch:   []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"default"},"data":` + data + `}`),
			Options: metav1.PatchOptions{FieldManager: manager, Force: &force}})
	}
	res, err := apply(nil, "alice", false, `{"a":"1","b":"1"}`)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Created {
		t.Fatal("the first apply did not create the object")
	}
	current := stored(t, res.Object)

	_, err = apply(current, "bob", false, `{"a":"2","b":"2","c":"2"}`)
	s := statusOf(t, err)
	if s.Code != http.StatusConflict || s.Reason != metav1.StatusReasonConflict || !apierrors.IsConflict(err) {
		t.Errorf("conflict: %d %s, want 409 Conflict", s.Code, s.Reason)
	}
	wantMsg := "Apply failed with 2 conflicts: conflicts with \"alice\":\n- .data.a\n- .data.b"
	if s.Message != wantMsg {
		t.Errorf("message %q, want %q", s.Message, wantMsg)
	}
	if s.Details == nil || len(s.Details.Causes) != 2 {
		t.Fatalf("details %+v, want two causes", s.Details)
	}
	for i, f := range []string{".data.a", ".data.b"} {
		c := s.Details.Causes[i]
		if c.Type != metav1.CauseTypeFieldManagerConflict || c.Field != f || c.Message != `conflict with "alice"` {
			t.Errorf("cause %d = %+v, want a FieldManagerConflict on %s with alice", i, c, f)
		}
	}

	res, err = apply(current, "bob", true, `{"a":"2","b":"2","c":"2"}`)
	if err != nil {
		t.Fatalf("forced apply: %v", err)
	}
	if got := managers(t, res.Object); !reflect.DeepEqual(got, []string{"bob/Apply@v1"}) {
		t.Errorf("managers after force %v: alice lost every field, so her entry goes", got)
	}
	if got, want := ownedFields(t, res.Object, "bob", metav1.ManagedFieldsOperationApply), `{"f:data":{"f:a":{},"f:b":{},"f:c":{}}}`; got != want {
		t.Errorf("bob owns %s, want %s", got, want)
	}
	current = res.Object

	// alice now agrees on a value and applies another key: shared ownership, no conflict.
	res, err = apply(current, "alice", false, `{"a":"2","d":"1"}`)
	if err != nil {
		t.Fatalf("agreeing apply: %v", err)
	}
	if got, want := ownedFields(t, res.Object, "alice", metav1.ManagedFieldsOperationApply), `{"f:data":{"f:a":{},"f:d":{}}}`; got != want {
		t.Errorf("alice owns %s, want %s", got, want)
	}
	if got, want := ownedFields(t, res.Object, "bob", metav1.ManagedFieldsOperationApply), `{"f:data":{"f:a":{},"f:b":{},"f:c":{}}}`; got != want {
		t.Errorf("bob owns %s, want %s", got, want)
	}
}

// TestApplyNoChange: re-applying the same configuration leaves managedFields as they were, times
// included, so the handler's write is a no-op.
func TestApplyNoChange(t *testing.T) {
	p := testPatcher(t)
	req := Request{Target: configMaps, Type: types.ApplyYAMLPatchType, Namespace: "default", Name: "cm",
		Patch:   []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"},"data":{"a":"1"}}`),
		Options: metav1.PatchOptions{FieldManager: "kubectl"}}
	res, err := p.Patch(nil, req)
	if err != nil {
		t.Fatal(err)
	}
	current := stored(t, res.Object)
	res, err = p.Patch(current, req)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := render(t, res.Object), render(t, current); got != want {
		t.Errorf("a repeated apply changed the object:\n%s\nwant:\n%s", got, want)
	}
	before := current.(metav1.Object).GetManagedFields()
	after := res.Object.(metav1.Object).GetManagedFields()
	if !reflect.DeepEqual(before, after) {
		t.Errorf("managedFields changed: %+v, was %+v", after, before)
	}
}

// TestUpdateTracksWrites: a create and an update record Update entries, with the manager derived
// from the User-Agent when none is given, and a later apply sees that ownership.
func TestUpdateTracksWrites(t *testing.T) {
	p := testPatcher(t)
	created, err := p.Update(configMaps, nil,
		decode(t, p, configMaps, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"default"},"data":{"a":"1"}}`),
		Manager("", "kubectl/v1.33.0 (linux/amd64) kubernetes/abcdef0"))
	if err != nil {
		t.Fatal(err)
	}
	if got := managers(t, created); !reflect.DeepEqual(got, []string{"kubectl/Update@v1"}) {
		t.Fatalf("managers after create %v", got)
	}
	current := stored(t, created)
	updated, err := p.Update(configMaps, current,
		decode(t, p, configMaps, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"default","uid":"c0ffee00-0000-4000-8000-000000000001"},"data":{"a":"1","b":"2"}}`),
		"replacer")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ownedFields(t, updated, "replacer", metav1.ManagedFieldsOperationUpdate), `{"f:data":{"f:b":{}}}`; got != want {
		t.Errorf("replacer owns %s, want %s", got, want)
	}
	if got := managers(t, current); !reflect.DeepEqual(got, []string{"kubectl/Update@v1"}) {
		t.Errorf("Update modified the stored object: managers %v", got)
	}
	_, err = p.Patch(updated, Request{Target: configMaps, Type: types.ApplyYAMLPatchType, Namespace: "default", Name: "cm",
		Patch:   []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"},"data":{"b":"3"}}`),
		Options: metav1.PatchOptions{FieldManager: "alice"}})
	if s := statusOf(t, err); s.Code != http.StatusConflict || !strings.Contains(s.Message, `conflict with "replacer" using v1: .data.b`) {
		t.Errorf("apply over an updated field: %d %q, want a conflict with replacer", s.Code, s.Message)
	}
}

// TestUpdateRejectsHandlerBugs: the wrong Go type or an unknown target is an internal error, not a
// panic.
func TestUpdateRejectsHandlerBugs(t *testing.T) {
	p := testPatcher(t)
	cm := decode(t, p, configMaps, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"}}`)
	for name, call := range map[string]func() error{
		"typed object for a custom resource": func() error { _, err := p.Update(widgets, nil, cm, "m"); return err },
		"secret target with a config map":    func() error { _, err := p.Update(secrets, nil, cm, "m"); return err },
		"unknown target": func() error {
			_, err := p.Update(Target{Resource: schema.GroupVersionResource{Version: "v1", Resource: "pods"}}, nil, cm, "m")
			return err
		},
		"patch of a typed object for a custom resource": func() error {
			_, err := p.Patch(cm, Request{Target: widgets, Type: types.MergePatchType, Name: "cm", Patch: []byte(`{}`)})
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			if s := statusOf(t, call()); s.Code != http.StatusInternalServerError {
				t.Errorf("%d %s, want 500", s.Code, s.Message)
			}
		})
	}
}

// TestJSONPatchLimits: kube's operation count (413) and copy size (422) limits.
func TestJSONPatchLimits(t *testing.T) {
	p := testPatcher(t)
	current := decode(t, p, configMaps, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"default","uid":"u"},"data":{"big":"`+strings.Repeat("x", 1<<20)+`"}}`)
	ops := func(n int, op string) []byte {
		list := make([]string, n)
		for i := range list {
			list[i] = op
		}
		return []byte("[" + strings.Join(list, ",") + "]")
	}
	patch := func(body []byte) (*Result, error) {
		return p.Patch(current, Request{Target: configMaps, Type: types.JSONPatchType, Namespace: "default", Name: "cm", Patch: body})
	}

	if s := statusOf(t, func() error { _, err := patch(nil); return err }()); s.Code != http.StatusBadRequest {
		t.Errorf("an empty body: %d %s, want 400", s.Code, s.Message)
	}
	if _, err := patch(ops(MaxJSONPatchOperations, `{"op":"add","path":"/data/k","value":"v"}`)); err != nil {
		t.Errorf("%d operations: %v", MaxJSONPatchOperations, err)
	}
	s := statusOf(t, func() error {
		_, err := patch(ops(MaxJSONPatchOperations+1, `{"op":"add","path":"/data/k","value":"v"}`))
		return err
	}())
	if s.Code != http.StatusRequestEntityTooLarge || s.Message != "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001" {
		t.Errorf("too many operations: %d %q", s.Code, s.Message)
	}

	// Each copy adds the 1 MiB value (plus its quotes); the third goes past 3 MiB.
	copies := []byte(`[{"op":"copy","from":"/data/big","path":"/data/c1"},{"op":"copy","from":"/data/big","path":"/data/c2"},` +
		`{"op":"copy","from":"/data/big","path":"/data/c3"},{"op":"copy","from":"/data/big","path":"/data/c4"}]`)
	s = statusOf(t, func() error { _, err := patch(copies); return err }())
	want := fmt.Sprintf("Unable to complete the copy, the accumulated size increase of copy is %d, exceeding the limit %d", 3*(1<<20+2), MaxJSONPatchCopyBytes)
	// kube's 422 says nothing more than NewGenericServerResponse's generic words, however the patch failed.
	if s.Code != http.StatusUnprocessableEntity || len(s.Details.Causes) != 0 || s.Message != "the server rejected our request due to an error in our request" {
		t.Errorf("copies past the limit: %d %q %+v, want kube's 422 without causes (the failure was %q)", s.Code, s.Message, s.Details, want)
	}
	if _, err := patch([]byte(`[{"op":"copy","from":"/data/big","path":"/data/c1"},{"op":"copy","from":"/data/big","path":"/data/c2"}]`)); err != nil {
		t.Errorf("copies within the limit: %v", err)
	}
}

// TestParseType: parameters are cut at the first ";" and nothing else is forgiven (case, spaces), as in
// kube's patch handler (checked against kube-apiserver v1.37.2); unknown media types and strategic
// merge patch on custom resources get kube's 415; an unknown target is a 500.
func TestParseType(t *testing.T) {
	p := testPatcher(t)
	for _, tt := range []struct {
		target      Target
		contentType string
		want        types.PatchType
		code        int32
	}{
		{configMaps, "application/json-patch+json", types.JSONPatchType, 0},
		{configMaps, "application/merge-patch+json; charset=utf-8", types.MergePatchType, 0},
		{configMaps, "Application/Strategic-Merge-Patch+JSON", "", http.StatusUnsupportedMediaType},
		{configMaps, " application/merge-patch+json", "", http.StatusUnsupportedMediaType},
		{configMaps, "application/merge-patch+json, foo/bar", "", http.StatusUnsupportedMediaType},
		{configMaps, "application/strategic-merge-patch+json;charset=utf-8", types.StrategicMergePatchType, 0},
		{configMaps, "application/apply-patch+yaml", types.ApplyYAMLPatchType, 0},
		{configMaps, "application/json", "", http.StatusUnsupportedMediaType},
		{configMaps, "application/apply-patch+cbor", "", http.StatusUnsupportedMediaType},
		{configMaps, "", "", http.StatusUnsupportedMediaType},
		{widgets, "application/merge-patch+json", types.MergePatchType, 0},
		{widgets, "application/strategic-merge-patch+json", "", http.StatusUnsupportedMediaType},
		{Target{Resource: widgets.Resource, Subresource: "scale"}, "application/strategic-merge-patch+json", "", http.StatusUnsupportedMediaType},
		{Target{Resource: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, Subresource: "status"}, "application/strategic-merge-patch+json", types.StrategicMergePatchType, 0},
		{Target{Resource: schema.GroupVersionResource{Version: "v1", Resource: "pods"}}, "application/merge-patch+json", "", http.StatusInternalServerError},
	} {
		t.Run(tt.target.String()+" "+tt.contentType, func(t *testing.T) {
			got, err := p.ParseType(tt.target, tt.contentType)
			if tt.code != 0 {
				if s := statusOf(t, err); s.Code != tt.code {
					t.Errorf("%d %s, want %d", s.Code, s.Message, tt.code)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("ParseType = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// TestAccepted lists the media types of each target in kube's order.
func TestAccepted(t *testing.T) {
	p := testPatcher(t)
	builtin := []types.PatchType{types.JSONPatchType, types.MergePatchType, types.StrategicMergePatchType, types.ApplyYAMLPatchType}
	custom := []types.PatchType{types.JSONPatchType, types.MergePatchType, types.ApplyYAMLPatchType}
	for _, tt := range []struct {
		target Target
		want   []types.PatchType
	}{
		{configMaps, builtin},
		{roleBindings, builtin},
		{Target{Resource: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, Subresource: "finalize"}, builtin},
		{widgets, custom},
		{Target{Resource: widgets.Resource, Subresource: "status"}, custom},
		{Target{Resource: widgets.Resource, Subresource: "scale"}, custom},
		{Target{Resource: schema.GroupVersionResource{Group: "example.com", Version: "v1beta1", Resource: "gadgets"}}, custom},
		{Target{Resource: widgets.Resource, Subresource: "proxy"}, nil},
	} {
		if got := p.Accepted(tt.target); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Accepted(%s) = %v, want %v", tt.target, got, tt.want)
		}
	}
}

// TestScaleSubresource: the scale subresource of a custom resource patches autoscaling/v1 Scale
// objects and records ownership under subresource "scale".
func TestScaleSubresource(t *testing.T) {
	p := testPatcher(t)
	scale := Target{Resource: widgets.Resource, Subresource: "scale"}
	current := decode(t, p, scale, `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"w","namespace":"default","uid":"u",`+
		`"managedFields":[{"manager":"m","operation":"Update","apiVersion":"autoscaling/v1","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:replicas":{}}}}]},`+
		`"spec":{"replicas":1},"status":{"replicas":1}}`)
	res, err := p.Patch(current, Request{Target: scale, Type: types.MergePatchType, Namespace: "default", Name: "w",
		Patch: []byte(`{"spec":{"replicas":4}}`), Options: metav1.PatchOptions{FieldManager: "kubectl-scale"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := valueAt(t, res.Object, "spec", "replicas"); got != int64(4) {
		t.Errorf("spec.replicas = %v (%T), want 4", got, got)
	}
	// m's only field is now kubectl-scale's, so m's entry goes.
	if got := managers(t, res.Object); !reflect.DeepEqual(got, []string{"kubectl-scale/Update/scale@autoscaling/v1"}) {
		t.Errorf("managers %v", got)
	}
}

func TestManager(t *testing.T) {
	for _, tt := range []struct{ fieldManager, userAgent, want string }{
		{"kubectl-edit", "kubectl/v1.33.0", "kubectl-edit"},
		{"", "kubectl/v1.33.0 (linux/amd64) kubernetes/abcdef0", "kubectl"},
		{"", "Go-http-client/1.1", "Go-http-client"},
		{"", "curl", "curl"},
		{"", "", ""},
		{"", "bad\x00agent\tname/1.0", "badagentname"},
		{"", strings.Repeat("é", 100) + "/1", strings.Repeat("é", 64)},
	} {
		if got := Manager(tt.fieldManager, tt.userAgent); got != tt.want {
			t.Errorf("Manager(%q, %q) = %q, want %q", tt.fieldManager, tt.userAgent, got, tt.want)
		}
	}
}

// TestConcurrentPatches runs every patch type from many goroutines on one stored object: the
// Patcher is shared by all requests, and the race detector checks it.
func TestConcurrentPatches(t *testing.T) {
	p := testPatcher(t)
	current := decode(t, p, configMaps, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"default","uid":"u",`+
		`"managedFields":[{"manager":"m","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:a":{}}}}]},"data":{"a":"1"}}`)
	bodies := map[types.PatchType]string{
		types.JSONPatchType:           `[{"op":"add","path":"/data/b","value":"2"}]`,
		types.MergePatchType:          `{"data":{"b":"2"}}`,
		types.StrategicMergePatchType: `{"data":{"b":"2"}}`,
		types.ApplyYAMLPatchType:      `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"},"data":{"b":"2"}}`,
	}
	errs := make(chan error, 64)
	for i := 0; i < 64; i++ {
		typ := []types.PatchType{types.JSONPatchType, types.MergePatchType, types.StrategicMergePatchType, types.ApplyYAMLPatchType}[i%4]
		go func() {
			res, err := p.Patch(current, Request{Target: configMaps, Type: typ, Namespace: "default", Name: "cm",
				Patch: []byte(bodies[typ]), Options: metav1.PatchOptions{FieldManager: fmt.Sprintf("m%d", i)}})
			if err == nil && valueAt(t, res.Object, "data", "b") != "2" {
				err = fmt.Errorf("%s: data.b not set", typ)
			}
			errs <- err
		}()
	}
	for i := 0; i < 64; i++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestObjectsWithoutTypeMeta: objects decoded from storage into Go types may lack apiVersion and
// kind; patches and Update still work and the results carry them.
func TestObjectsWithoutTypeMeta(t *testing.T) {
	p := testPatcher(t)
	bare := func() *corev1.ConfigMap {
		return &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "default", UID: "u", ManagedFields: []metav1.ManagedFieldsEntry{{
				Manager: "creator", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", FieldsType: "FieldsV1",
				FieldsV1: metav1.NewFieldsV1(`{"f:data":{".":{},"f:a":{}}}`),
			}}},
			Data: map[string]string{"a": "1"},
		}
	}
	bodies := map[types.PatchType]string{
		types.JSONPatchType:           `[{"op":"test","path":"/kind","value":"ConfigMap"},{"op":"replace","path":"/data/a","value":"2"}]`,
		types.MergePatchType:          `{"data":{"a":"2"}}`,
		types.StrategicMergePatchType: `{"data":{"a":"2"}}`,
		types.ApplyYAMLPatchType:      `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"},"data":{"a":"2"}}`,
	}
	for typ, body := range bodies {
		t.Run(string(typ), func(t *testing.T) {
			current := bare()
			force := typ == types.ApplyYAMLPatchType
			opts := metav1.PatchOptions{FieldManager: "m"}
			if force {
				opts.Force = &force
			}
			res, err := p.Patch(current, Request{Target: configMaps, Type: typ, Namespace: "default", Name: "cm", Patch: []byte(body), Options: opts})
			if err != nil {
				t.Fatal(err)
			}
			cm := res.Object.(*corev1.ConfigMap)
			if cm.APIVersion != "v1" || cm.Kind != "ConfigMap" || cm.Data["a"] != "2" {
				t.Errorf("result %s", render(t, cm))
			}
			op := metav1.ManagedFieldsOperationUpdate
			if typ == types.ApplyYAMLPatchType {
				op = metav1.ManagedFieldsOperationApply
			}
			if got, want := ownedFields(t, cm, "m", op), `{"f:data":{"f:a":{}}}`; got != want {
				t.Errorf("m owns %s, want %s", got, want)
			}
			// creator keeps data itself ({} and {".":{}} are the same set).
			creator := &fieldpath.Set{}
			if err := creator.FromJSON(strings.NewReader(ownedFields(t, cm, "creator", metav1.ManagedFieldsOperationUpdate))); err != nil {
				t.Fatal(err)
			}
			if want := fieldpath.NewSet(fieldpath.MakePathOrDie("data")); !creator.Equals(want) {
				t.Errorf("creator owns %v, want %v", creator, want)
			}
			if !reflect.DeepEqual(current, bare()) {
				t.Errorf("the current object changed: %s", render(t, current))
			}
		})
	}
	t.Run("Update", func(t *testing.T) {
		obj := bare()
		obj.ManagedFields = nil
		obj.Data["b"] = "2"
		out, err := p.Update(configMaps, bare(), obj, "writer")
		if err != nil {
			t.Fatal(err)
		}
		if got, want := ownedFields(t, out, "writer", metav1.ManagedFieldsOperationUpdate), `{"f:data":{"f:b":{}}}`; got != want {
			t.Errorf("writer owns %s, want %s", got, want)
		}
	})
}

// TestUnmanageableWriteKeepsOwnership: a write whose result does not fit the schema (validation will
// reject it afterwards) keeps the stored managedFields rather than failing, as kube does.
func TestUnmanageableWriteKeepsOwnership(t *testing.T) {
	p := testPatcher(t)
	current, err := p.Update(widgets, nil, decode(t, p, widgets,
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"default"},"spec":{"replicas":1}}`), "creator")
	if err != nil {
		t.Fatal(err)
	}
	current = stored(t, current)
	res, err := p.Patch(current, Request{Target: widgets, Type: types.MergePatchType, Namespace: "default", Name: "w",
		Patch: []byte(`{"spec":{"replicas":"many"}}`), Options: metav1.PatchOptions{FieldManager: "m"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := valueAt(t, res.Object, "spec", "replicas"); got != "many" {
		t.Errorf("spec.replicas = %v", got)
	}
	want := current.(metav1.Object).GetManagedFields()
	if got := res.Object.(metav1.Object).GetManagedFields(); !reflect.DeepEqual(got, want) {
		t.Errorf("managedFields %+v, want the stored %+v", got, want)
	}
}
