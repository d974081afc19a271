package patch

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/jsonmergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// The requests in this file are built the way kubectl 1.30–1.33 builds them, with the same
// apimachinery functions kubectl uses to compute its patches.

const lastApplied = corev1.LastAppliedConfigAnnotation

// withLastApplied returns config as kubectl apply sends it: with the last-applied-configuration
// annotation holding config itself (serialized without that annotation, so with an empty
// annotations map).
func withLastApplied(t *testing.T, config string) []byte {
	t.Helper()
	var obj map[string]any
	if err := json.Unmarshal([]byte(config), &obj); err != nil {
		t.Fatal(err)
	}
	md := obj["metadata"].(map[string]any)
	annotations, _ := md["annotations"].(map[string]any)
	if annotations == nil {
		annotations = map[string]any{}
	}
	delete(annotations, lastApplied)
	md["annotations"] = annotations
	inner, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	annotations[lastApplied] = string(inner) + "\n"
	out, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func annotation(t *testing.T, obj runtime.Object, key string) string {
	t.Helper()
	m, err := meta.Accessor(obj)
	if err != nil {
		t.Fatal(err)
	}
	return m.GetAnnotations()[key]
}

func mustJSON(t *testing.T, obj runtime.Object) []byte {
	t.Helper()
	js, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// TestKubectlClientSideApply follows a ConfigMap through kubectl apply -f (create with the
// annotation, then a 3-way strategic merge patch), a change by another manager in between, and
// then kubectl apply --server-side, which may take over what client-side apply set without a
// conflict but not what the other manager owns.
func TestKubectlClientSideApply(t *testing.T) {
	p := testPatcher(t)
	schema, err := strategicpatch.NewPatchMetaFromStruct(&corev1.ConfigMap{})
	if err != nil {
		t.Fatal(err)
	}

	// kubectl apply -f, object missing: POST ?fieldManager=kubectl-client-side-apply.
	config1 := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"app","namespace":"default"},"data":{"mode":"fast","level":"1"}}`
	created, err := p.Update(configMaps, nil, decode(t, p, configMaps, string(withLastApplied(t, config1))), "kubectl-client-side-apply")
	if err != nil {
		t.Fatal(err)
	}
	current := stored(t, created)

	// A controller adds a key with a merge patch.
	res, err := p.Patch(current, Request{Target: configMaps, Type: types.MergePatchType, Namespace: "default", Name: "app",
		Patch: []byte(`{"data":{"extra":"x"}}`), Options: metav1.PatchOptions{FieldManager: "controller"}})
	if err != nil {
		t.Fatal(err)
	}
	current = res.Object

	// kubectl apply -f with a changed file: a 3-way strategic merge patch from the annotation, the
	// new file and the live object.
	config2 := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"app","namespace":"default"},"data":{"mode":"slow","color":"blue"}}`
	patch, err := strategicpatch.CreateThreeWayMergePatch([]byte(annotation(t, current, lastApplied)), withLastApplied(t, config2), mustJSON(t, current), schema, true)
	if err != nil {
		t.Fatal(err)
	}
	res, err = p.Patch(current, Request{Target: configMaps, Type: types.StrategicMergePatchType, Namespace: "default", Name: "app",
		Patch: patch, Options: metav1.PatchOptions{FieldManager: "kubectl-client-side-apply", FieldValidation: "Strict"}})
	if err != nil {
		t.Fatalf("3-way patch %s: %v", patch, err)
	}
	current = res.Object
	cm := current.(*corev1.ConfigMap)
	if want := map[string]string{"mode": "slow", "color": "blue", "extra": "x"}; !reflect.DeepEqual(cm.Data, want) {
		t.Errorf("data after client-side apply %v, want %v (level removed, extra kept)", cm.Data, want)
	}
	var sent corev1.ConfigMap
	if err := json.Unmarshal(withLastApplied(t, config2), &sent); err != nil {
		t.Fatal(err)
	}
	if got, want := annotation(t, current, lastApplied), sent.Annotations[lastApplied]; got != want {
		t.Errorf("annotation %q, want the new configuration %q", got, want)
	}
	if got, want := ownedFields(t, current, "kubectl-client-side-apply", metav1.ManagedFieldsOperationUpdate),
		`{"f:data":{".":{},"f:color":{},"f:mode":{}},"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}}}}`; got != want {
		t.Errorf("kubectl-client-side-apply owns %s, want %s", got, want)
	}

	// kubectl apply --server-side: fieldManager=kubectl, force=false. Changing mode, which
	// client-side apply set and the annotation records, is no conflict for kubectl's manager.
	config3 := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"app","namespace":"default"},"data":{"mode":"fastest","color":"blue"}}`
	force := false
	ssa := func(current runtime.Object, body string) (*Result, error) {
		return p.Patch(current, Request{Target: configMaps, Type: types.ApplyYAMLPatchType, Namespace: "default", Name: "app",
			Patch: []byte(body), Options: metav1.PatchOptions{FieldManager: "kubectl", Force: &force, FieldValidation: "Strict"}})
	}
	res, err = ssa(current, config3)
	if err != nil {
		t.Fatalf("server-side apply after client-side apply: %v", err)
	}
	migrated := res.Object
	if got := migrated.(*corev1.ConfigMap).Data["mode"]; got != "fastest" {
		t.Errorf("mode %q after server-side apply", got)
	}
	if got, want := ownedFields(t, migrated, "kubectl", metav1.ManagedFieldsOperationApply), `{"f:data":{"f:color":{},"f:mode":{}}}`; got != want {
		t.Errorf("kubectl owns %s, want %s", got, want)
	}
	if got := annotation(t, migrated, lastApplied); !strings.Contains(got, `"mode":"fastest"`) {
		t.Errorf("the last-applied annotation was not brought up to date: %q", got)
	}

	// The same manager name does not excuse a change to what the controller owns.
	_, err = ssa(migrated, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"app","namespace":"default"},"data":{"mode":"fastest","color":"blue","extra":"y"}}`)
	if s := statusOf(t, err); s.Code != http.StatusConflict || s.Message != `Apply failed with 1 conflict: conflict with "controller" using v1: .data.extra` {
		t.Errorf("apply over the controller's key: %d %q", s.Code, s.Message)
	}
}

// TestKubectlApplyCustomResource: for a kind it has no Go type for, kubectl apply -f sends a 3-way
// JSON merge patch.
func TestKubectlApplyCustomResource(t *testing.T) {
	p := testPatcher(t)
	config1 := `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"default"},"spec":{"size":"small","tags":["a"]}}`
	created, err := p.Update(widgets, nil, decode(t, p, widgets, string(withLastApplied(t, config1))), "kubectl-client-side-apply")
	if err != nil {
		t.Fatal(err)
	}
	current := stored(t, created)
	config2 := `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"default"},"spec":{"replicas":2,"tags":["a","b"]}}`
	patch, err := jsonmergepatch.CreateThreeWayJSONMergePatch([]byte(annotation(t, current, lastApplied)), withLastApplied(t, config2), mustJSON(t, current))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.ParseType(widgets, "application/merge-patch+json"); err != nil {
		t.Fatal(err)
	}
	res, err := p.Patch(current, Request{Target: widgets, Type: types.MergePatchType, Namespace: "default", Name: "w",
		Patch: patch, Options: metav1.PatchOptions{FieldManager: "kubectl-client-side-apply", FieldValidation: "Strict"}})
	if err != nil {
		t.Fatalf("merge patch %s: %v", patch, err)
	}
	spec := valueAt(t, res.Object, "spec")
	if want := map[string]any{"replicas": int64(2), "tags": []any{"a", "b"}}; !reflect.DeepEqual(spec, want) {
		t.Errorf("spec %#v, want %#v", spec, want)
	}
	if got, want := ownedFields(t, res.Object, "kubectl-client-side-apply", metav1.ManagedFieldsOperationUpdate),
		`{"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}}},"f:spec":{".":{},"f:replicas":{},"f:tags":{}}}`; got != want {
		t.Errorf("kubectl-client-side-apply owns %s, want %s", got, want)
	}
}

// TestKubectlLabelAnnotateEdit: kubectl label and annotate send merge patches under their own
// managers; "label key-" sends null; kubectl edit sends a 2-way strategic merge patch.
func TestKubectlLabelAnnotateEdit(t *testing.T) {
	p := testPatcher(t)
	created, err := p.Update(configMaps, nil,
		decode(t, p, configMaps, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"app","namespace":"default"},"data":{"mode":"fast"}}`), "kubectl-create")
	if err != nil {
		t.Fatal(err)
	}
	current := stored(t, created)
	step := func(typ types.PatchType, manager, body string) {
		t.Helper()
		res, err := p.Patch(current, Request{Target: configMaps, Type: typ, Namespace: "default", Name: "app",
			Patch: []byte(body), Options: metav1.PatchOptions{FieldManager: manager}})
		if err != nil {
			t.Fatalf("%s by %s: %v", typ, manager, err)
		}
		current = res.Object
		ageManagedFields(current)
	}

	step(types.MergePatchType, "kubectl-label", `{"metadata":{"labels":{"env":"prod","team":"a"}}}`)
	step(types.MergePatchType, "kubectl-annotate", `{"metadata":{"annotations":{"owner":"ops"}}}`)
	cm := current.(*corev1.ConfigMap)
	if cm.Labels["env"] != "prod" || cm.Annotations["owner"] != "ops" {
		t.Fatalf("labels %v annotations %v", cm.Labels, cm.Annotations)
	}
	if got, want := ownedFields(t, current, "kubectl-label", metav1.ManagedFieldsOperationUpdate), `{"f:metadata":{"f:labels":{".":{},"f:env":{},"f:team":{}}}}`; got != want {
		t.Errorf("kubectl-label owns %s, want %s", got, want)
	}

	// kubectl label configmap app env-
	step(types.MergePatchType, "kubectl-label", `{"metadata":{"labels":{"env":null}}}`)
	if _, ok := current.(*corev1.ConfigMap).Labels["env"]; ok {
		t.Error("env label still there")
	}
	if got, want := ownedFields(t, current, "kubectl-label", metav1.ManagedFieldsOperationUpdate), `{"f:metadata":{"f:labels":{".":{},"f:team":{}}}}`; got != want {
		t.Errorf("kubectl-label owns %s after removing env, want %s", got, want)
	}

	// kubectl edit: the editor's result against what it showed, as a 2-way strategic merge patch.
	shown := mustJSON(t, current)
	edited := current.DeepCopyObject().(*corev1.ConfigMap)
	edited.Data["mode"] = "slow"
	patch, err := strategicpatch.CreateTwoWayMergePatch(shown, mustJSON(t, edited), &corev1.ConfigMap{})
	if err != nil {
		t.Fatal(err)
	}
	step(types.StrategicMergePatchType, "kubectl-edit", string(patch))
	if got := current.(*corev1.ConfigMap).Data["mode"]; got != "slow" {
		t.Errorf("mode %q after edit", got)
	}
	// Earlier writes, aged to the same second, sort by manager; the edit, written now, comes last.
	want := []string{"kubectl-annotate/Update@v1", "kubectl-create/Update@v1", "kubectl-label/Update@v1", "kubectl-edit/Update@v1"}
	if got := managers(t, current); !reflect.DeepEqual(got, want) {
		t.Errorf("managers %v, want %v", got, want)
	}
}
