package crschema

import (
	"context"
	"encoding/json"
	"math"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const scaled = `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"default","uid":"u-1",` +
	`"resourceVersion":"42","creationTimestamp":"2024-01-02T03:04:05Z","labels":{"a":"b"}},` +
	`"spec":{"size":"small","replicas":3},"status":{"replicas":2,"selector":"app=w"}}`

func TestScaleFromObject(t *testing.T) {
	tests := []struct {
		name    string
		version string
		obj     string
		want    string // the Scale as JSON
		err     string
		status  int32 // the code of a *StatusError
	}{
		{name: "every field", version: "v1", obj: scaled,
			want: `{"kind":"Scale","apiVersion":"autoscaling/v1","metadata":{"name":"w","namespace":"default","uid":"u-1","resourceVersion":"42","creationTimestamp":"2024-01-02T03:04:05Z"},"spec":{"replicas":3},"status":{"replicas":2,"selector":"app=w"}}`},
		{name: "no status yet", version: "v1",
			obj:  `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"replicas":0}}`,
			want: `{"kind":"Scale","apiVersion":"autoscaling/v1","metadata":{"name":"w"},"spec":{},"status":{"replicas":0}}`},
		{name: "other paths and no selector", version: "v1beta1",
			obj:  `{"apiVersion":"example.com/v1beta1","kind":"Widget","metadata":{"name":"w"},"spec":{"count":5},"status":{"count":4,"selector":"ignored"}}`,
			want: `{"kind":"Scale","apiVersion":"autoscaling/v1","metadata":{"name":"w"},"spec":{"replicas":5},"status":{"replicas":4}}`},
		{name: "spec replicas missing", version: "v1", obj: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{}}`,
			err: `Internal error occurred: the spec replicas field ".spec.replicas" does not exist`, status: 500},
		{name: "spec replicas of the wrong type", version: "v1", obj: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"replicas":"3"}}`,
			err: `.spec.replicas accessor error: 3 is of the type string, expected int64`},
		{name: "status replicas of the wrong type", version: "v1", obj: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"replicas":1},"status":{"replicas":1.5}}`,
			err: `.status.replicas accessor error: 1.5 is of the type float64, expected int64`},
		{name: "selector of the wrong type", version: "v1", obj: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"replicas":1},"status":{"selector":{}}}`,
			err: `.status.selector accessor error: map[] is of the type map[string]interface {}, expected string`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scale, err := validator(t, tt.version, "widgets").ScaleFromObject(object(t, tt.obj))
			if !checkError(t, err, tt.err, tt.status) {
				return
			}
			if got := jsonOf(t, scale); got != tt.want {
				t.Errorf("scale %s\nwant  %s", got, tt.want)
			}
		})
	}
}

func TestScaleWithoutSubresource(t *testing.T) {
	v := validator(t, "v1", "gadgets")
	obj := object(t, `{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"g"}}`)
	want := "example.com/v1, Kind=Gadget has no scale subresource"
	if v.HasScale() {
		t.Error("HasScale is true")
	}
	if _, err := v.ScaleFromObject(obj); errString(err) != want {
		t.Errorf("ScaleFromObject: %v", err)
	}
	if _, err := v.ScaleForUpdate(obj); errString(err) != want {
		t.Errorf("ScaleForUpdate: %v", err)
	}
	if _, err := v.ApplyScale(obj, &autoscalingv1.Scale{}); errString(err) != want {
		t.Errorf("ApplyScale: %v", err)
	}
}

func TestApplyScale(t *testing.T) {
	tests := []struct {
		name     string
		obj      string
		replicas int32
		rv       string
		want     string // the object's spec and resourceVersion
		err      string
		status   int32 // the code of a *StatusError
	}{
		{name: "only spec replicas change", obj: scaled, replicas: 5,
			want: `{"replicas":5,"size":"small"} rv=42`},
		{name: "the Scale's resourceVersion is the precondition", obj: scaled, replicas: 5, rv: "41",
			want: `{"replicas":5,"size":"small"} rv=41`},
		{name: "missing spec is created", obj: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"}}`, replicas: 1,
			want: `{"replicas":1} rv=`},
		{name: "unset replicas", obj: scaled, replicas: math.MinInt32,
			err: `the spec replicas field ".spec.replicas" cannot be empty`, status: 400},
		{name: "spec that is not an object", obj: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":"x"}`, replicas: 1,
			err: `setting .spec.replicas: value cannot be set because .spec is not a map[string]interface{}`},
	}
	v := widgets(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := object(t, tt.obj)
			before := jsonOf(t, obj)
			scale := &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{ResourceVersion: tt.rv}, Spec: autoscalingv1.ScaleSpec{Replicas: tt.replicas}}
			out, err := v.ApplyScale(obj, scale)
			if jsonOf(t, obj) != before {
				t.Error("ApplyScale changed its input")
			}
			if !checkError(t, err, tt.err, tt.status) {
				return
			}
			if got := jsonOf(t, out.Object["spec"]) + " rv=" + out.GetResourceVersion(); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// Writing a Scale and reading it back gives the replicas written, at every version's own path.
func TestScaleRoundTrip(t *testing.T) {
	for _, tc := range []struct{ version, obj string }{
		{"v1", scaled},
		{"v1beta1", `{"apiVersion":"example.com/v1beta1","kind":"Widget","metadata":{"name":"w"},"spec":{"count":1}}`},
	} {
		v := validator(t, tc.version, "widgets")
		scale, err := v.ScaleForUpdate(object(t, tc.obj))
		if err != nil {
			t.Fatal(err)
		}
		scale.Spec.Replicas = 9
		out, err := v.ApplyScale(object(t, tc.obj), scale)
		if err != nil {
			t.Fatal(err)
		}
		back, err := v.ScaleFromObject(out)
		if err != nil {
			t.Fatal(err)
		}
		if back.Spec.Replicas != 9 || back.Name != "w" {
			t.Errorf("%s: read back %d replicas of %q", tc.version, back.Spec.Replicas, back.Name)
		}
	}
}

// A scale write through ScaleForUpdate that does not set replicas fails, as a PATCH of the scale
// subresource of an object without spec replicas does in kube.
func TestScaleForUpdateMarksUnsetReplicas(t *testing.T) {
	v := widgets(t)
	obj := object(t, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"size":"small"}}`)
	scale, err := v.ScaleForUpdate(obj)
	if err != nil {
		t.Fatal(err)
	}
	_, err = v.ApplyScale(obj, scale)
	if !apierrors.IsBadRequest(err) || err.Error() != `the spec replicas field ".spec.replicas" cannot be empty` {
		t.Errorf("got %v, want kube's 400", err)
	}
	scale.Spec.Replicas = 2
	if _, err := v.ApplyScale(obj, scale); err != nil {
		t.Errorf("with replicas set: %v", err)
	}
}

// A negative replicas count passes ApplyScale and is the main resource's 422, as in kube.
func TestScaleValidation(t *testing.T) {
	v := widgets(t)
	old := object(t, scaled)
	obj, err := v.ApplyScale(old, &autoscalingv1.Scale{Spec: autoscalingv1.ScaleSpec{Replicas: -1}})
	if err != nil {
		t.Fatal(err)
	}
	want := `Widget.example.com "w" is invalid: [spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0, ` +
		`.spec.replicas: Invalid value: -1: should be a non-negative integer]`
	if got := errString(v.Invalid(obj.GetName(), v.ValidateUpdate(context.Background(), obj, old))); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// Field managers keep ownership of the replicas across a scale write. Owners of each version's spec
// replicas path (.spec.replicas in v1, .spec.count in v1beta1) own the Scale's spec.replicas; a manager
// that takes it over in the Scale takes it from them in the object, and their other fields stay theirs.
func TestScaleManagedFields(t *testing.T) {
	v := widgets(t)
	obj := object(t, scaled)
	obj.SetManagedFields([]metav1.ManagedFieldsEntry{
		managed(t, "beta-client", "example.com/v1beta1", `{"f:metadata":{"f:labels":{"f:a":{}}},"f:spec":{"f:count":{}}}`),
		managed(t, "kubectl", "example.com/v1", `{"f:spec":{"f:replicas":{},"f:size":{}}}`),
	})
	scale, err := v.ScaleForUpdate(obj)
	if err != nil {
		t.Fatal(err)
	}
	want := `beta-client autoscaling/v1 {"f:spec":{"f:replicas":{}}}; kubectl autoscaling/v1 {"f:spec":{"f:replicas":{}}}`
	if got := fieldsOf(scale.ManagedFields); got != want {
		t.Fatalf("Scale managed fields:\n%s\nwant\n%s", got, want)
	}

	// The Scale as the handler's field manager leaves it after "hpa" wrote spec.replicas.
	scale.Spec.Replicas = 6
	scale.ManagedFields = []metav1.ManagedFieldsEntry{managed(t, "hpa", "autoscaling/v1", `{"f:spec":{"f:replicas":{}}}`)}
	out, err := v.ApplyScale(obj, scale)
	if err != nil {
		t.Fatal(err)
	}
	want = `beta-client example.com/v1beta1 {"f:metadata":{"f:labels":{"f:a":{}}}}; hpa example.com/v1 {"f:spec":{"f:replicas":{}}}; ` +
		`kubectl example.com/v1 {"f:spec":{"f:size":{}}}`
	if got := fieldsOf(out.GetManagedFields()); got != want {
		t.Errorf("object managed fields:\n%s\nwant\n%s", got, want)
	}

	// A handler that does not track managers on Scale leaves them alone.
	scale.ManagedFields = nil
	out, err = v.ApplyScale(obj, scale)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fieldsOf(out.GetManagedFields()), fieldsOf(obj.GetManagedFields()); got != want {
		t.Errorf("managed fields changed:\n%s\nwant\n%s", got, want)
	}
}

func managed(t *testing.T, manager, apiVersion, fields string) metav1.ManagedFieldsEntry {
	t.Helper()
	if !json.Valid([]byte(fields)) {
		t.Fatalf("bad fields %s", fields)
	}
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: apiVersion,
		FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)}
}

// fieldsOf prints managed fields sorted by manager: "manager apiVersion fields; ...".
func fieldsOf(entries []metav1.ManagedFieldsEntry) string {
	s := ""
	for i, e := range entries {
		if i > 0 {
			s += "; "
		}
		s += e.Manager + " " + e.APIVersion + " " + string(e.FieldsV1.GetRawBytes())
	}
	return s
}
