package patch

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// benchConfigMap is a ConfigMap of a typical size (20 keys, labels, annotations) that kubectl
// applied server-side, so that it carries managedFields as stored objects do.
func benchConfigMap(b *testing.B, p *Patcher) (runtime.Object, string) {
	b.Helper()
	var data, labels []string
	for i := range 20 {
		data = append(data, fmt.Sprintf(`"key%02d":"value number %d of the configuration"`, i, i))
	}
	for i := range 4 {
		labels = append(labels, fmt.Sprintf(`"label%d":"v%d"`, i, i))
	}
	config := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"bench","namespace":"default","labels":{` +
		strings.Join(labels, ",") + `},"annotations":{"note":"benchmark"}},"data":{` + strings.Join(data, ",") + `}}`
	res, err := p.Patch(nil, Request{Target: configMaps, Type: types.ApplyYAMLPatchType, Namespace: "default", Name: "bench",
		Patch: []byte(config), Options: metav1.PatchOptions{FieldManager: "kubectl"}})
	if err != nil {
		b.Fatal(err)
	}
	return stored(b, res.Object), config
}

// BenchmarkPatchConfigMap changes one key of a ConfigMap with each patch type, as kubectl patch
// and kubectl apply --server-side do, managedFields bookkeeping included.
func BenchmarkPatchConfigMap(b *testing.B) {
	p := testPatcher(b)
	current, config := benchConfigMap(b, p)
	for _, bc := range []struct {
		name    string
		typ     types.PatchType
		manager string
		body    string
	}{
		{"json", types.JSONPatchType, "kubectl-patch", `[{"op":"replace","path":"/data/key07","value":"changed"}]`},
		{"merge", types.MergePatchType, "kubectl-patch", `{"data":{"key07":"changed"}}`},
		{"strategic", types.StrategicMergePatchType, "kubectl-patch", `{"data":{"key07":"changed"}}`},
		{"apply", types.ApplyYAMLPatchType, "kubectl", strings.Replace(config, "value number 7 of", "changed value 7 of", 1)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			req := Request{Target: configMaps, Type: bc.typ, Namespace: "default", Name: "bench", Patch: []byte(bc.body),
				Options: metav1.PatchOptions{FieldManager: bc.manager}}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.Patch(current, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchSmallConfigMap is the ConfigMap the benchmark harness (internal/bench) creates and updates: one
// label, three short data keys, revision as the changing value.
func benchSmallConfigMap(b *testing.B, p *Patcher, revision int) runtime.Object {
	b.Helper()
	return decode(b, p, configMaps, fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"update-0",`+
		`"namespace":"bench","labels":{"app":"bench"}},"data":{"mode":"fast","region":"eu-west-1","revision":"%d"}}`, revision))
}

// BenchmarkUpdate is the ownership bookkeeping of the creates (POST) and updates (PUT) the handlers
// do: the harness's small ConfigMap created and then updated by a client without fieldManager, and
// a ConfigMap of 20 keys that kubectl applied, replaced with a changed label by another manager.
func BenchmarkUpdate(b *testing.B) {
	p := testPatcher(b)
	const manager = "Go-http-client"
	small, err := p.Update(configMaps, nil, benchSmallConfigMap(b, p, 1), manager)
	if err != nil {
		b.Fatal(err)
	}
	small = stored(b, small)
	applied, _ := benchConfigMap(b, p)
	replaced := applied.DeepCopyObject()
	replaced.(metav1.Object).SetManagedFields(nil)
	replaced.(metav1.Object).SetLabels(map[string]string{"changed": "yes"})
	for _, bc := range []struct {
		name      string
		live, obj runtime.Object
		manager   string
	}{
		{"create/small", nil, benchSmallConfigMap(b, p, 1), manager},
		{"update/small", small, benchSmallConfigMap(b, p, 2), manager},
		{"create/configmap", nil, replaced, "kubectl-create"},
		{"update/configmap", applied, replaced, "kubectl-replace"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			benchUpdates(b, bc.obj, func(obj runtime.Object) error {
				_, err := p.Update(configMaps, bc.live, obj, bc.manager)
				return err
			})
		})
	}
}

// BenchmarkUpdateCustom is the bookkeeping of the peer comparison's UPDATE of a custom object: its
// writer changes a value it owns. "fast" is what Update does (fastUpdate answers), "library" what
// structured-merge-diff alone costs for the same update.
func BenchmarkUpdateCustom(b *testing.B) {
	p := testPatcher(b)
	own := widgetOwnership(b, p)
	live := liveWidget(b, p)
	obj := sent(live)
	if err := unstructured.SetNestedField(obj.Object, int64(2), "spec", "replicas"); err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name   string
		update func(obj runtime.Object) error
	}{
		{"fast", func(obj runtime.Object) error { _, err := p.Update(widgets, live, obj, fastManager); return err }},
		{"library", func(obj runtime.Object) error { _, err := own.fields.Update(live, obj, fastManager); return err }},
	} {
		b.Run(bc.name, func(b *testing.B) { benchUpdates(b, obj, bc.update) })
	}
}

// benchUpdates measures update on copies of obj. Update sets the managedFields of the object it is
// given, as the handlers' decoded objects are; copies are made in batches, outside the measurement.
func benchUpdates(b *testing.B, obj runtime.Object, update func(runtime.Object) error) {
	var objs []runtime.Object
	b.ReportAllocs()
	for b.Loop() {
		if len(objs) == 0 {
			b.StopTimer()
			for range 256 {
				objs = append(objs, obj.DeepCopyObject())
			}
			b.StartTimer()
		}
		next := objs[len(objs)-1]
		objs = objs[:len(objs)-1]
		if err := update(next); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNew builds the Patcher of the built-in API and two custom resources, as a server does
// once at start: the ownership machinery is left for the first write.
func BenchmarkNew(b *testing.B) {
	api := testAPI(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := New(api); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNewAndFirstWrite is New and the first create, which builds the schemas of every kind
// and the create's field manager: what a server pays once.
func BenchmarkNewAndFirstWrite(b *testing.B) {
	api := testAPI(b)
	obj := benchSmallConfigMap(b, testPatcher(b), 1)
	b.ReportAllocs()
	for b.Loop() {
		p, err := New(api)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := p.Update(configMaps, nil, obj.DeepCopyObject(), "Go-http-client"); err != nil {
			b.Fatal(err)
		}
	}
}
