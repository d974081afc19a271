package tables

import (
	"encoding/json"
	"fmt"
	"io"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

const benchObjects = 1000

func benchConfigMaps() []runtime.Object {
	objs := make([]runtime.Object, benchObjects)
	for i := range objs {
		objs[i] = &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{
				Name: fmt.Sprintf("config-%04d", i), Namespace: "default", ResourceVersion: fmt.Sprint(100 + i),
				UID:               "0b7e1d2c-1111-4a5b-9c3d-000000000001",
				CreationTimestamp: metav1.NewTime(testNow.Add(-time.Duration(i) * time.Minute)),
				Labels:            map[string]string{"app": "bench"},
			},
			Data: map[string]string{"a": "1", "b": "2"},
		}
	}
	return objs
}

func benchWidgets() []runtime.Object {
	objs := make([]runtime.Object, benchObjects)
	for i := range objs {
		objs[i] = &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "example.com/v1", "kind": "Widget",
			"metadata": map[string]any{"name": fmt.Sprintf("widget-%04d", i), "namespace": "default",
				"creationTimestamp": testNow.Add(-time.Duration(i) * time.Minute).Format(time.RFC3339)},
			"spec":   map[string]any{"replicas": int64(i), "ratio": 0.5, "selector": map[string]any{"app": "bench"}, "owner": "team"},
			"status": map[string]any{"ready": true, "phase": "Running", "startedAt": testNow.Add(-time.Hour).Format(time.RFC3339)},
		}}
	}
	return objs
}

// BenchmarkConvert1000 converts a list of 1,000 objects the way a list handler does: a Builder fed
// each object, then Finish. The /json variants also encode the table, as the handler then must.
func BenchmarkConvert1000(b *testing.B) {
	api := testAPI(b)
	run := func(b *testing.B, c *Converter, objs []runtime.Object, opts Options, encode bool) {
		b.ReportAllocs()
		for b.Loop() {
			bl, err := c.NewBuilder(opts)
			if err != nil {
				b.Fatal(err)
			}
			for _, o := range objs {
				if err := bl.Add(o); err != nil {
					b.Fatal(err)
				}
			}
			t := bl.Finish(metav1.ListMeta{ResourceVersion: "1000"})
			if encode {
				if err := json.NewEncoder(io.Discard).Encode(t); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	cm, _ := testConverter(b, api, configMaps)
	w, _ := testConverter(b, api, widgets)
	cms, ws := benchConfigMaps(), benchWidgets()
	b.Run("configmaps", func(b *testing.B) { run(b, cm, cms, Options{}, false) })
	b.Run("configmaps/includeObject=None", func(b *testing.B) { run(b, cm, cms, Options{IncludeObject: metav1.IncludeNone}, false) })
	b.Run("configmaps/json", func(b *testing.B) { run(b, cm, cms, Options{}, true) })
	b.Run("widgets", func(b *testing.B) { run(b, w, ws, Options{}, false) })
	b.Run("widgets/json", func(b *testing.B) { run(b, w, ws, Options{}, true) })
}

// BenchmarkWatch1000 converts 1,000 watch events of one stream, one table each, as a watch handler
// does with a Watch.
func BenchmarkWatch1000(b *testing.B) {
	api := testAPI(b)
	run := func(b *testing.B, c *Converter, objs []runtime.Object) {
		b.ReportAllocs()
		for b.Loop() {
			w, err := c.Watch(Options{})
			if err != nil {
				b.Fatal(err)
			}
			for _, o := range objs {
				if _, err := w.Convert(o); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	cm, _ := testConverter(b, api, configMaps)
	w, _ := testConverter(b, api, widgets)
	cms, ws := benchConfigMaps(), benchWidgets()
	b.Run("configmaps", func(b *testing.B) { run(b, cm, cms) })
	b.Run("widgets", func(b *testing.B) { run(b, w, ws) })
}
