package crschema

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apictl/apictl/pkg/routes"
)

// thingsCRD is a CRD manifest for Thing whose v1 schema is schemaYAML (indented for the manifest) and
// whose scale subresource, if scale is set, reads spec replicas at scale.
func thingsCRD(t *testing.T, schemaYAML, scale string) routes.CRD {
	t.Helper()
	manifest := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: things.example.com
spec:
  group: example.com
  names: {plural: things, kind: Thing}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
`
	if scale != "" {
		manifest += "      subresources:\n        scale: {specReplicasPath: " + scale + ", statusReplicasPath: .status.replicas}\n"
	}
	manifest += "      schema:\n        openAPIV3Schema:\n" + indent(schemaYAML, "          ")
	crds, err := routes.ParseCRDs("things.yaml", []byte(manifest))
	if err != nil {
		t.Fatalf("test CRD: %v\n%s", err, manifest)
	}
	return crds[0]
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i := range lines {
		lines[i] = prefix + lines[i]
	}
	return strings.Join(lines, "\n") + "\n"
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		name, schema, scale string
		want                string
	}{
		{name: "not structural: a property without a type",
			schema: "type: object\nproperties:\n  spec:\n    properties:\n      a: {type: string}",
			want:   `spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields`},
		{name: "not structural: an embedded resource that would prune everything",
			schema: "type: object\nproperties:\n  tpl: {type: object, x-kubernetes-embedded-resource: true}",
			want:   `spec.versions[0].schema.openAPIV3Schema.properties[tpl].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields`},
		{name: "default of the wrong type",
			schema: "type: object\nproperties:\n  count: {type: integer, default: x}",
			want:   `spec.versions[0].schema.openAPIV3Schema.properties[count].default: Invalid value: "string":  in body must be of type integer: "string"`},
		{name: "default outside an enum",
			schema: "type: object\nproperties:\n  s: {type: string, enum: [a, b], default: c}",
			want:   `spec.versions[0].schema.openAPIV3Schema.properties[s].default: Unsupported value: "c": supported values: "a", "b"`},
		{name: "default with fields the schema prunes",
			schema: "type: object\nproperties:\n  o:\n    type: object\n    default: {a: 1, zzz: 2}\n    properties:\n      a: {type: integer}",
			want:   `spec.versions[0].schema.openAPIV3Schema.properties[o].default: Invalid value: {"a":1,"zzz":2}: must not have unknown fields`},
		{name: "scale path with an index",
			schema: "type: object\nproperties:\n  spec: {type: object, x-kubernetes-preserve-unknown-fields: true}",
			scale:  "'.spec.items[0]'",
			want:   `spec.versions[0].subresources.scale.specReplicasPath: Invalid value: ".spec.items[0]": must be a simple JSON path of field names, like .spec.replicas`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := thingsCRD(t, tt.schema, tt.scale)
			_, err := Compile(c.Definition, "v1")
			if got := errString(err); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestCompileNeedsASchemaAndAVersion(t *testing.T) {
	c := thingsCRD(t, "type: object", "")
	if _, err := Compile(c.Definition, "v9"); errString(err) != `spec.versions: version "v9" is not declared` {
		t.Errorf("unknown version: %v", err)
	}
	c.Definition.Spec.Versions[0].Schema = nil
	if _, err := Compile(c.Definition, "v1"); errString(err) != `spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required` {
		t.Errorf("no schema: %v", err)
	}
}

// Defaults below additionalProperties are not checked, as in kube, but are served pruned; the CRD
// itself is never changed.
func TestCompilePrunesDefaultsWithoutChangingTheCRD(t *testing.T) {
	c := thingsCRD(t, "type: object\nproperties:\n  m:\n    type: object\n    additionalProperties:\n      type: object\n      default: {a: 1, zzz: 2}\n      properties:\n        a: {type: integer}", "")
	before := c.Definition.DeepCopy()
	v, err := Compile(c.Definition, "v1")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(before, c.Definition) {
		t.Error("Compile changed the CRD")
	}
	obj := object(t, `{"apiVersion":"example.com/v1","kind":"Thing","metadata":{"name":"t"},"m":{"k":null}}`)
	if _, err := v.Coerce(obj, false); err != nil {
		t.Fatal(err)
	}
	if got := jsonOf(t, obj.Object["m"]); got != `{"k":{"a":1}}` {
		t.Errorf("defaulted %s", got)
	}
}

func TestNewSet(t *testing.T) {
	set, err := NewSet(testCRDs(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		gvr   schema.GroupVersionResource
		found bool
		kind  string
		scale bool
	}{
		{schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}, true, "Widget", true},
		{schema.GroupVersionResource{Group: "example.com", Version: "v1beta1", Resource: "widgets"}, true, "Widget", true},
		{schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gadgets"}, true, "Gadget", false},
		{schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, false, "", false},
	} {
		v, ok := set.Validator(tc.gvr)
		if ok != tc.found {
			t.Errorf("%s: found %v", tc.gvr, ok)
			continue
		}
		if ok && (v.GroupVersionKind().Kind != tc.kind || v.GroupVersionKind().GroupVersion() != tc.gvr.GroupVersion() || v.HasScale() != tc.scale) {
			t.Errorf("%s: got %s, scale %v", tc.gvr, v.GroupVersionKind(), v.HasScale())
		}
	}
	var none *Set
	if _, ok := none.Validator(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}); ok {
		t.Error("a nil set found a validator")
	}
}

// NewSet reports each broken CRD with its file and document, and still serves the others.
func TestNewSetErrors(t *testing.T) {
	good := thingsCRD(t, "type: object", "")
	bad := thingsCRD(t, "type: object\nproperties:\n  count: {type: integer, default: x}", "")
	bad.Definition.Name, bad.Definition.Spec.Names.Plural = "others.example.com", "others"
	bad.File, bad.Document, bad.Line = "others.yaml", 2, 9
	unserved := thingsCRD(t, "type: object\nproperties:\n  count: {type: integer, default: x}", "")
	unserved.Definition.Spec.Versions[0].Served = false

	set, err := NewSet([]routes.CRD{good, bad, unserved})
	want := `others.yaml: document 2 (line 9): spec.versions[0].schema.openAPIV3Schema.properties[count].default: Invalid value: "string":  in body must be of type integer: "string"`
	if errString(err) != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
	if _, ok := set.Validator(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "things"}); !ok {
		t.Error("the valid CRD is missing")
	}
}

// Status writes validate against the status schema only where the version has a status subresource.
func TestStatusSchema(t *testing.T) {
	if v := widgets(t); v.statusSchema == nil {
		t.Error("v1 has a status subresource and a status schema")
	}
	if v := validator(t, "v1beta1", "widgets"); v.statusSchema != nil {
		t.Error("v1beta1 has no status subresource")
	}
}
