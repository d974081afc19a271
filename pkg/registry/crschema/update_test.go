package crschema

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestValidateUpdate(t *testing.T) {
	const prefix = `Widget.example.com "w" is invalid: `
	tests := []struct {
		name     string
		old, obj string
		noRV     bool // leave resourceVersion out of obj
		want     string
	}{
		{name: "valid change", old: w(`{"size":"small"}`), obj: w(`{"size":"large"}`)},
		// Custom resources take no unconditional updates.
		{name: "resourceVersion is required", old: w(`{"size":"small"}`), obj: w(`{"size":"large"}`), noRV: true,
			want: prefix + `metadata.resourceVersion: Invalid value: "": must be specified for an update`},
		// An object stored before the schema forbade upper case can still be updated elsewhere.
		{name: "unchanged invalid field is forgiven", old: w(`{"size":"small","color":"Red"}`), obj: w(`{"size":"small","color":"Red","replicas":2}`)},
		{name: "changed invalid field is reported", old: w(`{"size":"small","color":"Red"}`), obj: w(`{"size":"small","color":"Blue"}`),
			want: prefix + `spec.color: Invalid value: "Blue": spec.color in body should match '^[a-z]+$'`},
		{name: "new invalid field is reported", old: w(`{"size":"small"}`), obj: w(`{"size":"small","color":"Red"}`),
			want: prefix + `spec.color: Invalid value: "Red": spec.color in body should match '^[a-z]+$'`},
		// Required belongs to spec, which changed.
		{name: "missing required field of a changed object is reported", old: w(`{"color":"red"}`), obj: w(`{"color":"blue"}`),
			want: prefix + `spec.size: Required value`},
		{name: "map list items correlate by key, not position",
			old: w(`{"size":"small","parts":[{"name":"a","count":"x"},{"name":"b"}]}`),
			obj: w(`{"size":"small","parts":[{"name":"b"},{"name":"a","count":"x"}]}`)},
		{name: "changed map list item is reported",
			old:  w(`{"size":"small","parts":[{"name":"a","count":"x"}]}`),
			obj:  w(`{"size":"small","parts":[{"name":"a","count":"y"}]}`),
			want: prefix + `spec.parts[0].count: Invalid value: "string": spec.parts[0].count in body must be of type integer: "string"`},
		{name: "unchanged over-long list is forgiven",
			old: w(`{"size":"small","tags":["a","b","c","d"]}`), obj: w(`{"size":"large","tags":["a","b","c","d"]}`)},
		{name: "reordered over-long set list is reported",
			old: w(`{"size":"small","tags":["a","b","c","d"]}`), obj: w(`{"size":"small","tags":["d","c","b","a"]}`),
			want: prefix + `spec.tags: Too many: 4: must have at most 3 items`},
		{name: "list-type errors the old object had are not reported",
			old: w(`{"size":"small","tags":["a","a"]}`), obj: w(`{"size":"large","tags":["a","a"]}`)},
		{name: "new list-type errors are reported",
			old: w(`{"size":"small","tags":["a"]}`), obj: w(`{"size":"small","tags":["a","a"]}`),
			want: prefix + `spec.tags[1]: Duplicate value: "a"`},
		{name: "metadata name is immutable",
			old:  w(`{"size":"small"}`),
			obj:  `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"x","namespace":"default"},"spec":{"size":"small"}}`,
			want: `Widget.example.com "x" is invalid: metadata.name: Invalid value: "x": field is immutable`},
		{name: "kind is not ratcheted",
			old:  `{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"w","namespace":"default"}}`,
			obj:  `{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"w","namespace":"default"}}`,
			want: prefix + `kind: Invalid value: "Gadget": must be Widget`},
		{name: "scale replicas are checked",
			old: w(`{"size":"small","replicas":1}`), obj: w(`{"size":"small","replicas":-1}`),
			want: prefix + `[spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0, ` +
				`.spec.replicas: Invalid value: -1: should be a non-negative integer]`},
	}
	v := widgets(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj, old := object(t, tt.obj), stored(t, tt.old)
			if !tt.noRV {
				obj.SetResourceVersion(old.GetResourceVersion())
			}
			got := errString(v.Invalid(obj.GetName(), v.ValidateUpdate(context.Background(), obj, old)))
			if got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestValidateStatusUpdate(t *testing.T) {
	const prefix = `Widget.example.com "w" is invalid: `
	withStatus := func(spec, status string) string {
		return `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"default"},"spec":` + spec + `,"status":` + status + `}`
	}
	tests := []struct {
		name     string
		old, obj string
		want     string
	}{
		{name: "valid status", old: w(`{"size":"small"}`), obj: withStatus(`{"size":"small"}`, `{"replicas":2,"phase":"Ready"}`)},
		// A status write does not validate spec: only status is written.
		{name: "spec is not checked", old: w(`{}`), obj: withStatus(`{}`, `{"phase":"Ready"}`)},
		{name: "enum", old: w(`{"size":"small"}`), obj: withStatus(`{"size":"small"}`, `{"phase":"Gone"}`),
			want: prefix + `status.phase: Unsupported value: "Gone": supported values: "Pending", "Ready"`},
		// kube validates status on its own, so kube-openapi names the field from status down.
		{name: "type, also read by scale", old: w(`{"size":"small"}`), obj: withStatus(`{"size":"small"}`, `{"replicas":"x"}`),
			want: prefix + `[status.replicas: Invalid value: "string": replicas in body must be of type integer: "string", ` +
				`.status.replicas: Invalid value: 0: .status.replicas accessor error: x is of the type string, expected int64]`},
		{name: "wrong kind", old: w(`{"size":"small"}`),
			obj:  `{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"w","namespace":"default"},"status":{"phase":"Gone"}}`,
			want: prefix + `kind: Invalid value: "Gadget": must be Widget`},
		{name: "metadata not an object", old: w(`{"size":"small"}`),
			obj:  `{"apiVersion":"example.com/v1","kind":"Widget","metadata":"w","status":{"phase":"Ready"}}`,
			want: `Widget.example.com "" is invalid: metadata: Invalid value: "w": expected map[string]interface{}, got string`},
		{name: "unchanged invalid status is forgiven",
			old: withStatus(`{"size":"small"}`, `{"phase":"Gone","replicas":1}`), obj: withStatus(`{"size":"small"}`, `{"phase":"Gone","replicas":2}`)},
	}
	v := widgets(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj, old := stored(t, tt.obj), stored(t, tt.old)
			got := errString(v.Invalid(obj.GetName(), v.ValidateStatusUpdate(context.Background(), obj, old)))
			if got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// stored is an object as read from storage: with a resourceVersion.
func stored(t *testing.T, js string) *unstructured.Unstructured {
	t.Helper()
	u := object(t, js)
	u.SetResourceVersion("7")
	return u
}

// A body of another kind gets a Status named after that kind, as kube's store names it (checked
// against kube-apiserver v1.37.2); errors about a body of the right kind name the resource's.
func TestInvalidObject(t *testing.T) {
	v := widgets(t)
	for _, tc := range []struct{ name, obj, want string }{
		{"wrong kind", `{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"w","namespace":"default"},"spec":{"size":"small"}}`,
			`Gadget.example.com "w" is invalid: kind: Invalid value: "Gadget": must be Widget`},
		{"wrong group too", `{"apiVersion":"other.example.com/v1","kind":"Gadget","metadata":{"name":"w","namespace":"default"},"spec":{"size":"small"}}`,
			`Gadget.other.example.com "w" is invalid: [kind: Invalid value: "Gadget": must be Widget, apiVersion: Invalid value: "other.example.com/v1": must be example.com/v1]`},
		{"right kind", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"default"},"spec":{}}`,
			`Widget.example.com "w" is invalid: spec.size: Required value`},
		{"valid", w(`{"size":"small"}`), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := object(t, tc.obj)
			if got := errString(v.InvalidObject(obj, obj.GetName(), v.Validate(context.Background(), obj))); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}
