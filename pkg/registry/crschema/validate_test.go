package crschema

import (
	"context"
	"testing"
)

// w is the JSON of Widget "w" in namespace default with the given spec.
func w(spec string) string {
	return `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"default"},"spec":` + spec + `}`
}

const allFeatures = `{"size":"large","replicas":3,"color":"red","name":"abc","ratio":1.5,"enabled":true,
	"email":"a@example.com","created":"2024-01-02T03:04:05Z","custom":"not checked: unsupported format",
	"port":"http","note":null,"tags":["a","b"],"parts":[{"name":"a","count":2},{"name":"b"}],
	"labels":{"a":"1"},"settings":{"mode":"manual"},"extra":{"x":{"y":[1]}},
	"template":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":{"a":"b"}},"spec":{}},
	"nested":{"inner":{"known":{"a":"x"},"other":1}}}`

func TestValidate(t *testing.T) {
	const prefix = `Widget.example.com "w" is invalid: `
	tests := []struct {
		name     string
		version  string // default v1
		resource string // default widgets
		obj      string
		want     string // the 422 message; "" when valid
	}{
		{name: "minimal", obj: w(`{"size":"small"}`)},
		{name: "every feature valid", obj: w(allFeatures)},
		{name: "boolean type", obj: w(`{"size":"small","enabled":"yes"}`),
			want: prefix + `spec.enabled: Invalid value: "string": spec.enabled in body must be of type boolean: "string"`},
		{name: "object type", obj: w(`{"size":"small","settings":"x"}`),
			want: prefix + `spec.settings: Invalid value: "string": spec.settings in body must be of type object: "string"`},
		{name: "array type", obj: w(`{"size":"small","tags":"a"}`),
			want: prefix + `spec.tags: Invalid value: "string": spec.tags in body must be of type array: "string"`},
		// kube-openapi also checks a number's range for its type with an error that is not a field error;
		// kube prints it with a <nil> path.
		{name: "integer type", obj: w(`{"size":"small","parts":[{"name":"a","count":1.5}]}`),
			want: prefix + `[<nil>: Invalid value: "": Checked value must be of type integer (default format) in spec.parts[0].count, ` +
				`spec.parts[0].count: Invalid value: "number": spec.parts[0].count in body must be of type integer: "number"]`},
		// With format int32 the type error names the format. The scale subresource reads the same field.
		{name: "integer with int32 format, also read by scale", obj: w(`{"size":"small","replicas":1.5}`),
			want: prefix + `[<nil>: Invalid value: "": Checked value must be of type integer with format int32 in spec.replicas, ` +
				`spec.replicas: Invalid value: "float64": spec.replicas in body must be of type int32: "float64", ` +
				`.spec.replicas: Invalid value: 0: .spec.replicas accessor error: 1.5 is of the type float64, expected int64]`},
		{name: "null where not nullable", obj: w(`{"size":"small","enabled":null}`),
			want: prefix + `spec.enabled: Invalid value: "null": spec.enabled in body must be of type boolean: "null"`},
		{name: "required", obj: w(`{}`), want: prefix + `spec.size: Required value`},
		{name: "required in array items", obj: w(`{"size":"small","parts":[{"count":1}]}`),
			want: prefix + `spec.parts[0].name: Required value`},
		{name: "type in array items", obj: w(`{"size":"small","parts":[{"name":"a","count":"2"}]}`),
			want: prefix + `spec.parts[0].count: Invalid value: "string": spec.parts[0].count in body must be of type integer: "string"`},
		{name: "enum", obj: w(`{"size":"big"}`),
			want: prefix + `spec.size: Unsupported value: "big": supported values: "small", "large"`},
		{name: "pattern", obj: w(`{"size":"small","color":"Red"}`),
			want: prefix + `spec.color: Invalid value: "Red": spec.color in body should match '^[a-z]+$'`},
		{name: "minimum, also checked by scale", obj: w(`{"size":"small","replicas":-1}`),
			want: prefix + `[spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0, ` +
				`.spec.replicas: Invalid value: -1: should be a non-negative integer]`},
		{name: "maximum", obj: w(`{"size":"small","replicas":101}`),
			want: prefix + `spec.replicas: Invalid value: 101: spec.replicas in body should be less than or equal to 100`},
		{name: "exclusive minimum", obj: w(`{"size":"small","ratio":-0.5}`),
			want: prefix + `spec.ratio: Invalid value: -0.5: spec.ratio in body should be greater than 0`},
		{name: "multipleOf", obj: w(`{"size":"small","ratio":0.7}`),
			want: prefix + `spec.ratio: Invalid value: 0.7: spec.ratio in body should be a multiple of 0.5`},
		{name: "minLength", obj: w(`{"size":"small","name":"x"}`),
			want: prefix + `spec.name: Invalid value: "x": spec.name in body should be at least 2 chars long`},
		{name: "maxLength", obj: w(`{"size":"small","name":"abcdefghi"}`),
			want: prefix + `spec.name: Too long: may not be more than 8 bytes`},
		{name: "email format", obj: w(`{"size":"small","email":"x"}`),
			want: prefix + `spec.email: Invalid value: "x": spec.email in body must be of type email: "x"`},
		{name: "date-time format", obj: w(`{"size":"small","created":"yesterday"}`),
			want: prefix + `spec.created: Invalid value: "yesterday": spec.created in body must be of type date-time: "yesterday"`},
		{name: "int-or-string takes integers", obj: w(`{"size":"small","port":8080}`)},
		{name: "int-or-string rejects objects", obj: w(`{"size":"small","port":{}}`),
			want: prefix + `spec.port: Invalid value: "object": spec.port in body must be of type integer,string: "object"`},
		{name: "int-or-string rejects fractions", obj: w(`{"size":"small","port":1.5}`),
			want: prefix + `spec.port: Invalid value: "number": spec.port in body must be of type integer,string: "number"`},
		{name: "maxItems", obj: w(`{"size":"small","tags":["a","b","c","d"]}`),
			want: prefix + `spec.tags: Too many: 4: must have at most 3 items`},
		{name: "list-type set", obj: w(`{"size":"small","tags":["a","a"]}`),
			want: prefix + `spec.tags[1]: Duplicate value: "a"`},
		{name: "list-type map", obj: w(`{"size":"small","parts":[{"name":"a"},{"name":"a","count":2}]}`),
			want: prefix + `spec.parts[1]: Duplicate value: {"name":"a"}`},
		{name: "additionalProperties", obj: w(`{"size":"small","labels":{"a":1}}`),
			want: prefix + `spec.labels.a: Invalid value: "integer": spec.labels.a in body must be of type string: "integer"`},
		{name: "maxProperties", obj: w(`{"size":"small","labels":{"a":"1","b":"2","c":"3"}}`),
			want: prefix + `spec.labels: Too many: 3: must have at most 2 items`},
		{name: "declared fields below preserve-unknown-fields", obj: w(`{"size":"small","nested":{"inner":{"known":{"a":1}}}}`),
			want: prefix + `spec.nested.inner.known.a: Invalid value: "integer": spec.nested.inner.known.a in body must be of type string: "integer"`},
		{name: "embedded resource needs apiVersion and kind", obj: w(`{"size":"small","template":{}}`),
			want: prefix + `[spec.template.apiVersion: Required value, spec.template.kind: Required value]`},
		{name: "embedded resource kind and apiVersion", obj: w(`{"size":"small","template":{"apiVersion":"a/b/c","kind":1}}`),
			want: prefix + `[spec.template.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c, ` +
				`spec.template.kind: Invalid value: 1: must be a string]`},
		{name: "embedded resource name", obj: w(`{"size":"small","template":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a/b"}}}`),
			want: prefix + `spec.template.metadata.name: Invalid value: "a/b": may not contain '/'`},
		{name: "embedded resource label", obj: w(`{"size":"small","template":{"apiVersion":"v1","kind":"Pod","metadata":{"labels":{"a":"-"}}}}`),
			want: prefix + `spec.template.metadata.labels: Invalid value: "-": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`},
		{name: "metadata name", obj: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"W_1","namespace":"default"},"spec":{"size":"small"}}`,
			want: `Widget.example.com "W_1" is invalid: metadata.name: Invalid value: "W_1": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`},
		{name: "metadata name required", obj: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"namespace":"default"},"spec":{"size":"small"}}`,
			want: `Widget.example.com "" is invalid: metadata.name: Required value: name or generateName is required`},
		{name: "metadata generateName", obj: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"generateName":"Bad_","name":"w","namespace":"default"},"spec":{"size":"small"}}`,
			want: `Widget.example.com "w" is invalid: metadata.generateName: Invalid value: "Bad_": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`},
		{name: "metadata namespace required", obj: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"size":"small"}}`,
			want: prefix + `metadata.namespace: Required value`},
		{name: "metadata namespace forbidden", resource: "gadgets", obj: `{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"g","namespace":"default"}}`,
			want: `Gadget.example.com "g" is invalid: metadata.namespace: Forbidden: not allowed on this type`},
		{name: "metadata not an object", obj: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":"w","spec":{"size":"small"}}`,
			want: `Widget.example.com "" is invalid: metadata: Invalid value: "w": expected map[string]interface{}, got string`},
		{name: "wrong kind is reported alone", obj: `{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"w"},"spec":{"size":"big"}}`,
			want: prefix + `kind: Invalid value: "Gadget": must be Widget`},
		{name: "wrong apiVersion is reported alone", obj: `{"apiVersion":"example.com/v1beta1","kind":"Widget","metadata":{"name":"w"},"spec":{}}`,
			want: prefix + `apiVersion: Invalid value: "example.com/v1beta1": must be example.com/v1`},
		{name: "status is validated on create", obj: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"default"},"spec":{"size":"small"},"status":{"phase":"Gone"}}`,
			want: prefix + `status.phase: Unsupported value: "Gone": supported values: "Pending", "Ready"`},
		{name: "scale reads status replicas and selector", obj: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"default"},"spec":{"size":"small"},"status":{"replicas":"x","selector":1}}`,
			want: prefix + `[status.replicas: Invalid value: "string": status.replicas in body must be of type integer: "string", ` +
				`status.selector: Invalid value: "integer": status.selector in body must be of type string: "integer", ` +
				`.status.replicas: Invalid value: 0: .status.replicas accessor error: x is of the type string, expected int64, ` +
				`.status.selector: Invalid value: "": .status.selector accessor error: 1 is of the type int64, expected string]`},
		{name: "scale replicas fit in int32", version: "v1beta1", obj: `{"apiVersion":"example.com/v1beta1","kind":"Widget","metadata":{"name":"w","namespace":"default"},"spec":{"count":3000000000}}`,
			want: prefix + `[.spec.count: Invalid value: 3000000000: should be less than or equal to 2147483647, spec: Invalid value: failed rule: self.count <= 10]`},
		{name: "preserve-unknown-fields at the root", resource: "gadgets", obj: `{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"g"},"anything":{"goes":[1,"a"]}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			version, resource := tt.version, tt.resource
			if version == "" {
				version = "v1"
			}
			if resource == "" {
				resource = "widgets"
			}
			v := validator(t, version, resource)
			obj := object(t, tt.obj)
			got := errString(v.Invalid(obj.GetName(), v.Validate(context.Background(), obj)))
			if got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}
