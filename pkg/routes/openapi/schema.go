package openapi

import (
	"reflect"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
)

// Extension names kube puts on schemas.
const (
	extGVK             = "x-kubernetes-group-version-kind"
	extPatchStrategy   = "x-kubernetes-patch-strategy"
	extPatchMergeKey   = "x-kubernetes-patch-merge-key"
	extListType        = "x-kubernetes-list-type"
	extListMapKeys     = "x-kubernetes-list-map-keys"
	extAction          = "x-kubernetes-action"
	extPreserveUnknown = "x-kubernetes-preserve-unknown-fields"
	extIntOrString     = "x-kubernetes-int-or-string"
	extEmbedded        = "x-kubernetes-embedded-resource"
)

// definitions collects the named schemas (components) a document refers to. Schemas of Go types
// are derived by reflection, the way kube's openapi-gen derives them from the same types: JSON
// names from json tags, descriptions from the SwaggerDoc methods k8s.io/api types carry, required
// for fields without omitempty, and kube's extensions from patchStrategy, patchMergeKey, listType
// and listMapKey tags. Types that describe their own schema (metav1.Time, resource.Quantity,
// intstr.IntOrString, ...) through OpenAPISchemaType keep it.
type definitions struct {
	v3 bool
	// kube is kube's field-manager schema, where the markers of kube's types come from.
	kube *smdschema.Schema
	defs map[string]*spec.Schema
	gvks map[string][]schema.GroupVersionKind
	// generated caches kube-openapi's generated definitions by Go package, for the packages
	// generatedDefinitions names; filled on first use.
	generated map[string]map[string]common.OpenAPIDefinition
}

func newDefinitions(v3 bool) (*definitions, error) {
	kube, err := kubeFieldSchema()
	if err != nil {
		return nil, err
	}
	return &definitions{v3: v3, kube: kube, defs: map[string]*spec.Schema{}, gvks: map[string][]schema.GroupVersionKind{}}, nil
}

// ref is the JSON reference to a named definition.
func (d *definitions) ref(name string) spec.Ref {
	if d.v3 {
		return spec.MustCreateRef("#/components/schemas/" + name)
	}
	return spec.MustCreateRef("#/definitions/" + name)
}

// refSchema is a schema that only refers to name.
func (d *definitions) refSchema(name string) *spec.Schema {
	return &spec.Schema{SchemaProps: spec.SchemaProps{Ref: d.ref(name)}}
}

// addGVK records that definition name is the schema of gvk.
func (d *definitions) addGVK(name string, gvk schema.GroupVersionKind) {
	for _, have := range d.gvks[name] {
		if have == gvk {
			return
		}
	}
	d.gvks[name] = append(d.gvks[name], gvk)
}

// finish attaches the recorded kinds and returns the definitions.
func (d *definitions) finish() map[string]*spec.Schema {
	for name, gvks := range d.gvks {
		s, ok := d.defs[name]
		if !ok {
			continue
		}
		list := make([]any, len(gvks))
		for i, gvk := range gvks {
			list[i] = map[string]any{"group": gvk.Group, "kind": gvk.Kind, "version": gvk.Version}
		}
		s.AddExtension(extGVK, list)
	}
	return d.defs
}

// definitionName names a Go type as kube does: the package path with its domain reversed, dots for
// slashes, then the type name (k8s.io/api/core/v1.ConfigMap is io.k8s.api.core.v1.ConfigMap).
func definitionName(t reflect.Type) string {
	path := t.PkgPath()
	first, rest, _ := strings.Cut(path, "/")
	labels := strings.Split(first, ".")
	for i, j := 0, len(labels)-1; i < j; i, j = i+1, j-1 {
		labels[i], labels[j] = labels[j], labels[i]
	}
	name := strings.Join(labels, ".")
	if rest != "" {
		name += "." + strings.ReplaceAll(rest, "/", ".")
	}
	return name + "." + t.Name()
}

// Interfaces through which apimachinery types describe their own schema.
type (
	schemaTyper  interface{ OpenAPISchemaType() []string }
	schemaFormat interface{ OpenAPISchemaFormat() string }
	v3OneOfTyper interface{ OpenAPIV3OneOfTypes() []string }
	swaggerDocer interface{ SwaggerDoc() map[string]string }
)

// valueOf is the zero value of t, to ask it for its schema and docs.
func valueOf(t reflect.Type) any { return reflect.New(t).Elem().Interface() }

// docs are the SwaggerDoc descriptions of a struct type, by JSON field name ("" for the type).
func docs(t reflect.Type) map[string]string {
	if d, ok := valueOf(t).(swaggerDocer); ok {
		return d.SwaggerDoc()
	}
	return nil
}

// define returns the definition name of a named Go type, deriving its schema the first time.
func (d *definitions) define(t reflect.Type) string {
	name := definitionName(t)
	if _, ok := d.defs[name]; ok {
		return name
	}
	if d.defineGenerated(name, t) {
		return name
	}
	s := &spec.Schema{}
	// Register before walking the fields, so that recursive types refer to themselves.
	d.defs[name] = s
	v := valueOf(t)
	if typer, ok := v.(schemaTyper); ok {
		s.Description = docs(t)[""]
		format := ""
		if f, ok := v.(schemaFormat); ok {
			format = f.OpenAPISchemaFormat()
		}
		if oneOf, ok := v.(v3OneOfTyper); ok && d.v3 {
			s.Format = format
			for _, typ := range oneOf.OpenAPIV3OneOfTypes() {
				s.OneOf = append(s.OneOf, spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{typ}}})
			}
			return name
		}
		s.Type, s.Format = typer.OpenAPISchemaType(), format
		return name
	}
	*s = spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"object"}, Description: docs(t)[""]}}
	d.addFields(s, t)
	applySchemaMarkers(d.kube, name, s)
	applyMarkers(name, s)
	return name
}

// addFields adds the JSON fields of struct type t to s, inlining embedded structs.
func (d *definitions) addFields(s *spec.Schema, t reflect.Type) {
	fieldDocs := docs(t)
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				d.addFields(s, ft)
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		prop := d.fieldSchema(f.Type, fieldDocs[name])
		// The items of a List kind are the one list kube publishes without a list type.
		imply := name != "items" || !isListKind(t)
		addTagExtensions(prop, f.Type, f.Tag, imply)
		s.SetProperty(name, *prop)
		if !hasOption(opts, "omitempty") && !hasOption(opts, "omitzero") {
			s.Required = append(s.Required, name)
		}
	}
}

func hasOption(opts, want string) bool {
	for _, o := range strings.Split(opts, ",") {
		if o == want {
			return true
		}
	}
	return false
}

// addTagExtensions turns kube's patch and list struct tags into schema extensions. A map list
// without listMapKey takes its patch merge key, as kube's markers always pair them.
//
// A list field without a listType tag gets the list type its patch tags imply: a map keyed by
// the patch merge key, a set for a merge without a key, atomic otherwise. kube's +listType
// markers live in comments reflection cannot see, but every list of the types kube serves
// carries one (kube-apiserver v1.37.2's OpenAPI), and this is the list type kube's field
// manager falls back on for a list without one, so it never changes what managedFields record;
// applySchemaMarkers gives the lists whose marker says otherwise kube's list type. A named slice
// type (metav1.Verbs) is a type of its own that kube publishes without a list type.
func addTagExtensions(s *spec.Schema, t reflect.Type, tag reflect.StructTag, imply bool) {
	strategy, key := tag.Get("patchStrategy"), tag.Get("patchMergeKey")
	if strategy != "" {
		s.AddExtension(extPatchStrategy, strategy)
	}
	if key != "" {
		s.AddExtension(extPatchMergeKey, key)
	}
	listType, keys := tag.Get("listType"), tag.Get("listMapKey")
	if listType == "" && imply {
		listType = impliedListType(t, strategy, key)
	}
	if listType == "" {
		return
	}
	if listType == "map" && keys == "" {
		keys = key
	}
	if listType == "map" && keys == "" {
		return
	}
	s.AddExtension(extListType, listType)
	if listType == "map" {
		var list []any
		for _, k := range strings.Split(keys, ",") {
			list = append(list, k)
		}
		s.AddExtension(extListMapKeys, list)
	}
}

// isListKind reports whether struct type t is a List kind: it has list metadata.
func isListKind(t reflect.Type) bool {
	for i := 0; i < t.NumField(); i++ {
		if t.Field(i).Type == reflect.TypeFor[metav1.ListMeta]() {
			return true
		}
	}
	return false
}

// impliedListType is the list type of a field of type t without a listType tag, from its patch
// strategy and merge key, or "" for a field that is not an unnamed list.
func impliedListType(t reflect.Type, strategy, key string) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Name() != "" || t.Kind() != reflect.Slice || t.Elem().Kind() == reflect.Uint8 {
		return ""
	}
	if !slices.Contains(strings.Split(strategy, ","), "merge") {
		return "atomic"
	}
	if key != "" {
		return "map"
	}
	return "set"
}

// fieldSchema is the schema of a field of type t with a description.
func (d *definitions) fieldSchema(t reflect.Type, description string) *spec.Schema {
	pointer := false
	for t.Kind() == reflect.Pointer {
		t, pointer = t.Elem(), true
	}
	if d.isDefinition(t) {
		name := d.define(t)
		isStruct := t.Kind() == reflect.Struct && !d.isScalar(t)
		if !d.v3 {
			s := d.refSchema(name)
			s.Description = description
			return s
		}
		if description == "" && (pointer || !isStruct) {
			return d.refSchema(name)
		}
		s := &spec.Schema{SchemaProps: spec.SchemaProps{AllOf: []spec.Schema{*d.refSchema(name)}, Description: description}}
		if isStruct && !pointer {
			s.Default = map[string]any{}
		}
		return s
	}
	s := d.inlineSchema(t)
	s.Description = description
	return s
}

// isDefinition says whether t gets a named definition: named structs and types with their own
// schema.
func (d *definitions) isDefinition(t reflect.Type) bool {
	if t.Name() == "" || t.PkgPath() == "" {
		return false
	}
	if _, ok := valueOf(t).(schemaTyper); ok {
		return true
	}
	return t.Kind() == reflect.Struct
}

func (d *definitions) isScalar(t reflect.Type) bool {
	_, ok := valueOf(t).(schemaTyper)
	return ok
}

// inlineSchema is the schema of an unnamed or basic type.
func (d *definitions) inlineSchema(t reflect.Type) *spec.Schema {
	typed := func(typ, format string) *spec.Schema {
		return &spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{typ}, Format: format}}
	}
	switch t.Kind() {
	case reflect.String:
		return typed("string", "")
	case reflect.Bool:
		return typed("boolean", "")
	case reflect.Int8, reflect.Uint8:
		return typed("integer", "byte")
	case reflect.Int16, reflect.Uint16, reflect.Int32, reflect.Int:
		return typed("integer", "int32")
	case reflect.Int64, reflect.Uint32, reflect.Uint64, reflect.Uint:
		return typed("integer", "int64")
	case reflect.Float32:
		return typed("number", "float")
	case reflect.Float64:
		return typed("number", "double")
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return typed("string", "byte")
		}
		s := typed("array", "")
		s.Items = &spec.SchemaOrArray{Schema: d.fieldSchema(t.Elem(), "")}
		return s
	case reflect.Map:
		s := typed("object", "")
		s.AdditionalProperties = &spec.SchemaOrBool{Allows: true, Schema: d.fieldSchema(t.Elem(), "")}
		return s
	case reflect.Struct:
		s := typed("object", "")
		d.addFields(s, t)
		return s
	}
	// Interfaces and the like hold anything.
	return &spec.Schema{}
}
