package crschema

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"

	"github.com/apictl/apictl/pkg/routes"
)

// Validator is the compiled schema of one served version of a custom resource. It is immutable and
// safe for concurrent use; build it once at start-up with Compile or NewSet.
type Validator struct {
	gvk        schema.GroupVersionKind
	namespaced bool

	// structural drives pruning, defaulting and list types. Its defaults are pruned, as kube prunes
	// them when it serves a CRD.
	structural *structuralschema.Structural
	embedded   *embeddedNode // nil when the schema has no embedded resources
	// root validates whole objects (rootValidator is its compiled form for creates; updates ratchet);
	// statusSchema validates status subresource writes, nil when the version has no status
	// subresource or its schema declares no status.
	root          *spec.Schema
	rootValidator *validate.SchemaValidator
	statusSchema  *spec.Schema

	scale *scalePaths // nil without the scale subresource
	// rules are the schema's compiled x-kubernetes-validations (CEL) rules, nil without rules.
	rules *cel.Validator
}

// GroupVersionKind is the kind the validator accepts: example.com/v1, Kind=Widget.
func (v *Validator) GroupVersionKind() schema.GroupVersionKind { return v.gvk }

// HasScale reports whether the version declares the scale subresource.
func (v *Validator) HasScale() bool { return v.scale != nil }

// Compile builds the Validator of one version of a CRD that has already passed routes' CRD checks. It
// rejects what kube rejects when a CRD is created and this package relies on: a schema that is not
// structural, defaults that do not validate or carry unknown fields, and scale paths that are not
// simple paths. Errors carry the CRD's field paths (spec.versions[0].schema.openAPIV3Schema...).
// The version's x-kubernetes-validations (CEL) rules are compiled here, once, with kube's validator;
// ValidateRules is the check that refuses rules that do not compile or cost too much (NewSet runs it).
func Compile(crd *apiextensionsv1.CustomResourceDefinition, version string) (*Validator, error) {
	i := slices.IndexFunc(crd.Spec.Versions, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool { return v.Name == version })
	if i < 0 {
		return nil, fmt.Errorf("spec.versions: version %q is not declared", version)
	}
	ver := &crd.Spec.Versions[i]
	verPath := field.NewPath("spec", "versions").Index(i)
	schemaPath := verPath.Child("schema", "openAPIV3Schema")
	if ver.Schema == nil || ver.Schema.OpenAPIV3Schema == nil {
		return nil, field.ErrorList{field.Required(schemaPath, "schemas are required")}.ToAggregate()
	}
	s, errs := structural(ver.Schema.OpenAPIV3Schema, schemaPath)
	if len(errs) > 0 {
		return nil, errs.ToAggregate()
	}

	v := &Validator{
		gvk:        schema.GroupVersionKind{Group: crd.Spec.Group, Version: version, Kind: crd.Spec.Names.Kind},
		namespaced: crd.Spec.Scope == apiextensionsv1.NamespaceScoped,
		structural: s,
		embedded:   embeddedTree(s),
		root:       toOpenAPI(s),
		rules:      compileRules(s),
	}
	v.rootValidator = validate.NewSchemaValidator(v.root, nil, "", strfmt.Default)
	if sub := ver.Subresources; sub != nil {
		if st, ok := s.Properties["status"]; ok && sub.Status != nil {
			v.statusSchema = toOpenAPI(&st)
		}
		if sub.Scale != nil {
			sp, errs := newScalePaths(crd, v.gvk.GroupVersion(), sub.Scale, verPath.Child("subresources", "scale"))
			if len(errs) > 0 {
				return nil, errs.ToAggregate()
			}
			v.scale = sp
		}
	}
	return v, nil
}

// structural converts an openAPIV3Schema to a structural schema, checks it as kube checks a CRD's
// schema, and prunes its defaults.
func structural(props *apiextensionsv1.JSONSchemaProps, path *field.Path) (*structuralschema.Structural, field.ErrorList) {
	internal := &apiextensions.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(props, internal, nil); err != nil {
		return nil, field.ErrorList{field.Invalid(path, "", err.Error())}
	}
	s, err := structuralschema.NewStructural(internal)
	if err != nil {
		return nil, field.ErrorList{field.Invalid(path, "", err.Error())}
	}
	if errs := structuralschema.ValidateStructural(path, s); len(errs) > 0 {
		return nil, errs
	}
	if errs := checkDefaults(s, path); len(errs) > 0 {
		return nil, errs
	}
	// Pruning defaults in place must not touch the caller's CRD: NewStructural shares default values.
	s = s.DeepCopy()
	pruneDefaults(s, true, false)
	return s, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Set holds the validators of every served version of a set of CRDs, by group, version and resource.
type Set struct {
	validators map[schema.GroupVersionResource]*Validator
}

// NewSet compiles every served version of crds. Each problem is a *routes.CRDError naming the file
// and document of its CRD; all are returned joined, with the validators of the CRDs that compiled.
func NewSet(crds []routes.CRD) (*Set, error) {
	set := &Set{validators: map[schema.GroupVersionResource]*Validator{}}
	var errs []error
	for _, c := range crds {
		d := c.Definition
		for _, ver := range d.Spec.Versions {
			if !ver.Served {
				continue
			}
			v, err := Compile(d, ver.Name)
			if err != nil {
				errs = append(errs, &routes.CRDError{File: c.File, Document: c.Document, Line: c.Line, Item: c.Item, Group: d.Spec.Group, Err: err})
				continue
			}
			set.validators[schema.GroupVersionResource{Group: d.Spec.Group, Version: ver.Name, Resource: d.Spec.Names.Plural}] = v
		}
	}
	return set, errors.Join(errs...)
}

// CheckRules refuses manifests whose CEL rules kube's CRD validation refuses (a rule that does not
// compile, one over its cost budget), with kube's messages, so that `serve` says so at start-up. A
// CRD written through the API gets the same check from its registry rules; one stored earlier is
// served as kube serves it, without checking again.
func CheckRules(crds []routes.CRD) error {
	var errs []error
	for _, c := range crds {
		d := c.Definition
		// kube's CRD validation takes a context only to cancel the evaluation of defaults; start-up has
		// nothing to cancel it with.
		for _, e := range ValidateRules(context.Background(), d) {
			errs = append(errs, &routes.CRDError{File: c.File, Document: c.Document, Line: c.Line, Item: c.Item, Group: d.Spec.Group, Err: e})
		}
	}
	return errors.Join(errs...)
}

// Validator returns the validator of a custom resource version; false for resources the set does not
// hold (built-in resources among them). A nil Set holds nothing.
func (s *Set) Validator(gvr schema.GroupVersionResource) (*Validator, bool) {
	if s == nil {
		return nil, false
	}
	v, ok := s.validators[gvr]
	return v, ok
}
