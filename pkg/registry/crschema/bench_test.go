package crschema

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// typical is a Widget as kubectl sends it: metadata with labels and annotations, a dozen spec fields
// with a map list and an embedded resource, one unknown field, no status.
const typical = `{"apiVersion":"example.com/v1","kind":"Widget",
	"metadata":{"name":"web","namespace":"default","labels":{"app":"web","tier":"frontend"},
		"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}"}},
	"spec":{"size":"large","replicas":3,"color":"green","name":"web","ratio":1.5,"enabled":true,
		"email":"ops@example.com","created":"2024-01-02T03:04:05Z","port":8080,"tags":["a","b"],
		"parts":[{"name":"cpu","count":2},{"name":"disk"},{"name":"net","count":4}],
		"labels":{"team":"a"},"settings":{"mode":"manual"},"unknown":"pruned",
		"template":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":{"app":"web"}},
			"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`

// BenchmarkCreate is what a create of a custom resource costs in this package: decoding the body with
// unknown-field warnings, pruning, defaulting and validating it.
func BenchmarkCreate(b *testing.B) {
	v := widgets(b)
	body := []byte(typical)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		obj, warnings, err := v.DecodeBody(body, "Warn")
		if err != nil || len(warnings) != 1 {
			b.Fatal(err, warnings)
		}
		if errs := v.Validate(ctx, obj); len(errs) > 0 {
			b.Fatal(errs)
		}
	}
}

// BenchmarkDecodeBody decodes, prunes and defaults the typical body, reporting unknown fields.
func BenchmarkDecodeBody(b *testing.B) {
	v := widgets(b)
	body := []byte(typical)
	b.ReportAllocs()
	for b.Loop() {
		if _, warnings, err := v.DecodeBody(body, "Warn"); err != nil || len(warnings) != 1 {
			b.Fatal(err, warnings)
		}
	}
}

// BenchmarkValidate validates the decoded typical object.
func BenchmarkValidate(b *testing.B) {
	v, obj := widgets(b), decodedTypical(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if errs := v.Validate(ctx, obj); len(errs) > 0 {
			b.Fatal(errs)
		}
	}
}

// BenchmarkValidateUpdate validates an update of one field, with ratcheting.
func BenchmarkValidateUpdate(b *testing.B) {
	v, old := widgets(b), decodedTypical(b)
	old.SetResourceVersion("5")
	obj := old.DeepCopy()
	obj.Object["spec"].(map[string]any)["replicas"] = int64(4)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if errs := v.ValidateUpdate(ctx, obj, old); len(errs) > 0 {
			b.Fatal(errs)
		}
	}
}

// BenchmarkDecodeStored is the cost every read adds: decoding, pruning and defaulting a stored object.
func BenchmarkDecodeStored(b *testing.B) {
	v, obj := widgets(b), decodedTypical(b)
	data := []byte(jsonOf(b, obj))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.DecodeStored(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompile is the start-up cost of one CRD version.
func BenchmarkCompile(b *testing.B) {
	crd := testCRDs(b)[0].Definition
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compile(crd, "v1"); err != nil {
			b.Fatal(err)
		}
	}
}

// decodedTypical is the typical object as DecodeBody returns it.
func decodedTypical(b *testing.B) *unstructured.Unstructured {
	obj, _, err := widgets(b).DecodeBody([]byte(typical), "Ignore")
	if err != nil {
		b.Fatal(err)
	}
	return obj
}
