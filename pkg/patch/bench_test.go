package patch

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// BenchmarkUpdateConfigMap is the ownership bookkeeping of a PUT that changes one key.
func BenchmarkUpdateConfigMap(b *testing.B) {
	p := testPatcher(b)
	current, _ := benchConfigMap(b, p)
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		obj := current.DeepCopyObject()
		obj.(metav1.Object).SetManagedFields(nil)
		obj.(interface{ GetObjectMeta() metav1.Object }).GetObjectMeta().SetLabels(map[string]string{"changed": "yes"})
		b.StartTimer()
		if _, err := p.Update(configMaps, current, obj, "kubectl-replace"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNew builds the Patcher of the built-in API and two custom resources, as a server does
// once at start.
func BenchmarkNew(b *testing.B) {
	api := testAPI(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := New(api); err != nil {
			b.Fatal(err)
		}
	}
}
