package crschema

import (
	"errors"
	"reflect"
	"testing"
)

func TestDecodeBody(t *testing.T) {
	const unknownFields = `{"apiVersion":"example.com/v1","kind":"Widget","bogus":1,` +
		`"metadata":{"name":"w","namespace":"d","foo":1},` +
		`"spec":{"size":"small","size":"large","bogus":{"a":1},"parts":[{"name":"a","x":1}],` +
		`"nested":{"inner":{"keep":1,"known":{"a":"1","drop":2}}},"extra":{"anything":[1]},"port":{"a":1},` +
		`"template":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","zzz":1},"spec":{"containers":[]}}}}`
	const pruned = `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"d"},` +
		`"spec":{"color":"blue","extra":{"anything":[1]},"nested":{"inner":{"keep":1,"known":{"a":"1"}}},` +
		`"parts":[{"count":1,"name":"a"}],"port":{},"settings":{"level":3,"mode":"auto"},"size":"large",` +
		`"template":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[]}}}}`
	unknownWarnings := []string{
		`duplicate field "spec.size"`, // the JSON decoder's own strict errors come first
		`unknown field "metadata.foo"`,
		`unknown field "bogus"`, // then pruning's, sorted
		`unknown field "spec.bogus"`,
		`unknown field "spec.nested.inner.known.drop"`,
		`unknown field "spec.parts[0].x"`,
		`unknown field "spec.port.a"`,
		`unknown field "spec.template.metadata.zzz"`, // then embedded metadata's
	}
	tests := []struct {
		name      string
		body      string
		directive string
		want      string // the decoded object
		warnings  []string
		err       string // the 400's message
	}{
		{name: "ignore drops unknown fields silently", body: unknownFields, directive: "Ignore", want: pruned},
		{name: "warn reports each field", body: unknownFields, directive: "Warn", want: pruned, warnings: unknownWarnings},
		{name: "no directive means warn", body: unknownFields, want: pruned, warnings: unknownWarnings},
		{name: "strict rejects", body: unknownFields, directive: "Strict",
			err: `Widget in version "v1" cannot be handled as a Widget: strict decoding error: duplicate field "spec.size", ` +
				`unknown field "metadata.foo", unknown field "bogus", unknown field "spec.bogus", unknown field "spec.nested.inner.known.drop", ` +
				`unknown field "spec.parts[0].x", unknown field "spec.port.a", unknown field "spec.template.metadata.zzz"`},
		{name: "strict accepts known fields", directive: "Strict",
			body: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"size":"small","color":"red"}}`,
			want: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"color":"red","settings":{"level":3,"mode":"auto"},"size":"small"}}`},
		{name: "preserve-unknown-fields at the root keeps everything", directive: "Strict",
			body: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"size":"small","labels":{"any":"key"}}}`,
			want: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"color":"blue","labels":{"any":"key"},"settings":{"level":3,"mode":"auto"},"size":"small"}}`},
		{name: "missing kind", directive: "Strict", body: `{"apiVersion":"example.com/v1","metadata":{"name":"w"}}`,
			err: `the object provided is unrecognized (must be of type Widget): Object 'Kind' is missing in '{"apiVersion":"example.com/v1","metadata":{"name":"w"}}' ({"apiVersion":"example.com/v1" ...)`},
		{name: "missing kind without strict decoding", directive: "Ignore", body: `{"apiVersion":"example.com/v1","metadata":{"name":"w"}}`,
			err: `Widget in version "v1" cannot be handled as a Widget: Object 'Kind' is missing in '{"apiVersion":"example.com/v1","metadata":{"name":"w"}}'`},
		{name: "not an object", body: `[1]`,
			err: `the object provided is unrecognized (must be of type Widget): couldn't get version/kind; json parse error: json: cannot unmarshal array into Go value of type struct { APIVersion string "json:\"apiVersion,omitempty\""; Kind string "json:\"kind,omitempty\"" } (5b315d)`},
		{name: "not JSON", body: `{"kind":`,
			err: `the object provided is unrecognized (must be of type Widget): couldn't get version/kind; json parse error: unexpected end of JSON input ({"kind":)`},
		{name: "another version", body: `{"apiVersion":"example.com/v1beta1","kind":"Widget","metadata":{"name":"w"}}`,
			err: `the API version in the data (example.com/v1beta1) does not match the expected API version (example.com/v1)`},
		{name: "metadata of the wrong shape", body: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","labels":"x"}}`,
			err: `Widget in version "v1" cannot be handled as a Widget: json: cannot unmarshal string into Go struct field ObjectMeta.labels of type map[string]string`},
		// The body's kind is read first; the version it lacks comes from the path.
		{name: "a number JSON cannot hold", body: `{"kind":"Widget","spec":{"size":1e400}}`,
			err: `Widget in version "v1" cannot be handled as a Widget: json: cannot unmarshal number 1e400 into Go value of type float64`},
		{name: "embedded apiVersion must be a string", body: w(`{"size":"small","template":{"apiVersion":1}}`),
			err: `Widget in version "v1" cannot be handled as a Widget: spec.template.apiVersion: Invalid value: 1: must be a string`},
		// The kind is left for validation, which reports it as 422 Invalid.
		{name: "another kind is not pruned", body: `{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"w"},"x":1}`, directive: "Strict",
			want: `{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"w"},"x":1}`},
	}
	v := widgets(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj, warnings, err := v.DecodeBody([]byte(tt.body), tt.directive)
			if !checkError(t, err, tt.err, 400) {
				return
			}
			if got := jsonOf(t, obj); got != tt.want {
				t.Errorf("object %s\nwant   %s", got, tt.want)
			}
			if !reflect.DeepEqual(warnings, tt.warnings) {
				t.Errorf("warnings %q\nwant     %q", warnings, tt.warnings)
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	tests := []struct {
		name       string
		spec, want string
	}{
		{name: "missing fields take their default", spec: `{"size":"small"}`,
			want: `{"color":"blue","settings":{"level":3,"mode":"auto"},"size":"small"}`},
		{name: "a present object is not replaced, its fields are defaulted", spec: `{"size":"small","color":"red","settings":{}}`,
			want: `{"color":"red","settings":{"level":3},"size":"small"}`},
		{name: "null takes the default", spec: `{"size":"small","color":null,"settings":null}`,
			want: `{"color":"blue","settings":{"level":3,"mode":"auto"},"size":"small"}`},
		{name: "null is dropped where not allowed and nothing replaces it", spec: `{"size":"small","replicas":null,"labels":{"a":null,"b":"x"}}`,
			want: `{"color":"blue","labels":{"b":"x"},"settings":{"level":3,"mode":"auto"},"size":"small"}`},
		{name: "null is kept where nullable", spec: `{"size":"small","note":null}`,
			want: `{"color":"blue","note":null,"settings":{"level":3,"mode":"auto"},"size":"small"}`},
		{name: "list items are defaulted", spec: `{"size":"small","parts":[{"name":"a"},{"name":"b","count":5}]}`,
			want: `{"color":"blue","parts":[{"count":1,"name":"a"},{"count":5,"name":"b"}],"settings":{"level":3,"mode":"auto"},"size":"small"}`},
		{name: "null list items are left for validation", spec: `{"size":"small","parts":[null]}`,
			want: `{"color":"blue","parts":[null],"settings":{"level":3,"mode":"auto"},"size":"small"}`},
		{name: "embedded metadata is normalised", spec: `{"size":"small","template":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","creationTimestamp":null}}}`,
			want: `{"color":"blue","settings":{"level":3,"mode":"auto"},"size":"small","template":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}}}`},
	}
	v := widgets(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := widget(t, tt.spec)
			unknown, err := v.Coerce(obj, true)
			if err != nil || len(unknown) > 0 {
				t.Fatalf("Coerce: unknown fields %q, error %v", unknown, err)
			}
			if got := jsonOf(t, obj.Object["spec"]); got != tt.want {
				t.Errorf("spec %s\nwant %s", got, tt.want)
			}
		})
	}
}

// Defaults are copies: changing a defaulted value must not change the schema's default, which the
// next object gets.
func TestDefaultsAreCopied(t *testing.T) {
	v := widgets(t)
	a, b := widget(t, `{"size":"small"}`), widget(t, `{"size":"small"}`)
	if _, err := v.Coerce(a, false); err != nil {
		t.Fatal(err)
	}
	a.Object["spec"].(map[string]any)["settings"].(map[string]any)["mode"] = "changed"
	if _, err := v.Coerce(b, false); err != nil {
		t.Fatal(err)
	}
	if got := jsonOf(t, b.Object["spec"]); got != `{"color":"blue","settings":{"level":3,"mode":"auto"},"size":"small"}` {
		t.Errorf("second object got %s", got)
	}
}

func TestDecodePatched(t *testing.T) {
	const patched = `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"size":"small","bogus":1}}`
	patchErr := errors.New(`duplicate field "spec.size"`)
	tests := []struct {
		name      string
		body      string
		patchErrs []error
		directive string
		warnings  []string
		err       string
	}{
		{name: "ignore", body: patched, patchErrs: nil, directive: "Ignore"},
		{name: "warn lists the patch's errors first", body: patched, patchErrs: []error{patchErr}, directive: "Warn",
			warnings: []string{`duplicate field "spec.size"`, `unknown field "spec.bogus"`}},
		{name: "strict is a 422 naming the patched object", body: patched, directive: "Strict",
			err: ` "" is invalid: patch: Invalid value: "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\",\"metadata\":{\"name\":\"w\"},\"spec\":{\"size\":\"small\",\"bogus\":1}}": strict decoding error: unknown field "spec.bogus"`},
		{name: "a patch that removes the kind", body: `{"apiVersion":"example.com/v1"}`, directive: "Strict",
			err: ` "" is invalid: patch: Invalid value: "{\"apiVersion\":\"example.com/v1\"}": Object 'Kind' is missing in '{"apiVersion":"example.com/v1"}'`},
	}
	v := widgets(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj, warnings, err := v.DecodePatched([]byte(tt.body), tt.patchErrs, tt.directive)
			if !checkError(t, err, tt.err, 422) {
				return
			}
			if _, found := obj.Object["spec"].(map[string]any)["bogus"]; found {
				t.Error("unknown field not pruned")
			}
			if !reflect.DeepEqual(warnings, tt.warnings) {
				t.Errorf("warnings %q\nwant     %q", warnings, tt.warnings)
			}
		})
	}
}

func TestDecodeStored(t *testing.T) {
	tests := []struct {
		name      string
		version   string
		stored    string
		want, err string
	}{
		// A field given a default after the object was written appears on read.
		{name: "defaults on read", version: "v1",
			stored: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","generation":2},"spec":{"size":"small"}}`,
			want:   `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"generation":2,"name":"w"},"spec":{"color":"blue","settings":{"level":3,"mode":"auto"},"size":"small"}}`},
		{name: "unknown fields are pruned, malformed metadata dropped, generation repaired", version: "v1",
			stored: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","labels":"x","foo":1},"spec":{"size":"small","color":"red","old":1},"status":{"gone":true}}`,
			want:   `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"generation":1,"name":"w"},"spec":{"color":"red","settings":{"level":3,"mode":"auto"},"size":"small"},"status":{}}`},
		{name: "embedded resources of the wrong shape are repaired", version: "v1",
			stored: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","generation":1},"spec":{"size":"small","color":"red",` +
				`"template":{"apiVersion":1,"kind":"Pod","metadata":{"name":"p","labels":"x"}}}}`,
			want: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"generation":1,"name":"w"},"spec":{"color":"red","settings":{"level":3,"mode":"auto"},"size":"small",` +
				`"template":{"kind":"Pod","metadata":{"name":"p"}}}}`},
		// kube's None conversion: only apiVersion changes, then the version's own schema applies.
		{name: "another version of the CRD", version: "v1beta1",
			stored: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","generation":1},"spec":{"size":"small","count":2}}`,
			want:   `{"apiVersion":"example.com/v1beta1","kind":"Widget","metadata":{"generation":1,"name":"w"},"spec":{"count":2}}`},
		{name: "not an object", version: "v1", stored: `"x"`,
			err: `decoding a stored Widget: json: cannot unmarshal string into Go value of type map[string]interface {}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj, err := validator(t, tt.version, "widgets").DecodeStored([]byte(tt.stored))
			if !checkError(t, err, tt.err, 0) {
				return
			}
			if got := jsonOf(t, obj); got != tt.want {
				t.Errorf("object %s\nwant   %s", got, tt.want)
			}
		})
	}
}
