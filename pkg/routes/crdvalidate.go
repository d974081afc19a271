package routes

import (
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	crdScopes          = []string{string(apiextensionsv1.ClusterScoped), string(apiextensionsv1.NamespaceScoped)}
	crdColumnFormats   = []string{"int32", "int64", "float", "double", "byte", "date", "date-time", "password"}
	crdConversionKinds = []string{string(apiextensionsv1.NoneConverter), string(apiextensionsv1.WebhookConverter)}
)

// validateCRD checks what apictl relies on, with kube's field paths and wording: names, scope,
// versions (at least one served, exactly one storage, each with a schema whose root is an object),
// the scale subresource's paths and printer columns. It is a subset of kube's validation: value
// validations inside schemas are not checked.
func validateCRD(crd *apiextensionsv1.CustomResourceDefinition) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	s := &crd.Spec

	switch {
	case s.Group == "":
		errs = append(errs, field.Required(spec.Child("group"), ""))
	case len(validation.IsDNS1123Subdomain(s.Group)) > 0:
		errs = append(errs, field.Invalid(spec.Child("group"), s.Group, strings.Join(validation.IsDNS1123Subdomain(s.Group), "; ")))
	case !strings.Contains(s.Group, "."):
		errs = append(errs, field.Invalid(spec.Child("group"), s.Group, "should be a domain with at least one dot"))
	}
	errs = append(errs, validateCRDNames(&s.Names, spec.Child("names"))...)
	if s.Names.Plural != "" && s.Group != "" && crd.Name != s.Names.Plural+"."+s.Group {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), crd.Name, `must be spec.names.plural+"."+spec.group`))
	}
	switch {
	case s.Scope == "":
		errs = append(errs, field.Required(spec.Child("scope"), ""))
	case s.Scope != apiextensionsv1.ClusterScoped && s.Scope != apiextensionsv1.NamespaceScoped:
		errs = append(errs, field.NotSupported(spec.Child("scope"), s.Scope, crdScopes))
	}
	if c := s.Conversion; c != nil && c.Strategy != "" && c.Strategy != apiextensionsv1.NoneConverter && c.Strategy != apiextensionsv1.WebhookConverter {
		errs = append(errs, field.NotSupported(spec.Child("conversion", "strategy"), c.Strategy, crdConversionKinds))
	}
	errs = append(errs, validateCRDVersions(s.Versions, spec.Child("versions"))...)
	return errs
}

func validateCRDNames(n *apiextensionsv1.CustomResourceDefinitionNames, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	label := func(p *field.Path, v string, required bool) {
		if v == "" {
			if required {
				errs = append(errs, field.Required(p, ""))
			}
			return
		}
		if msgs := validation.IsDNS1035Label(v); len(msgs) > 0 {
			errs = append(errs, field.Invalid(p, v, strings.Join(msgs, "; ")))
		}
	}
	// Singular and listKind default from kind: when kind is missing or wrong, only kind is reported.
	kindOK := isCamelCase(n.Kind)
	label(path.Child("plural"), n.Plural, true)
	label(path.Child("singular"), n.Singular, kindOK)
	for _, k := range []struct {
		name, value string
		report      bool
	}{{"kind", n.Kind, true}, {"listKind", n.ListKind, kindOK || (n.ListKind != "" && n.ListKind != n.Kind+"List")}} {
		switch {
		case !k.report:
		case k.value == "":
			errs = append(errs, field.Required(path.Child(k.name), ""))
		case !isCamelCase(k.value):
			errs = append(errs, field.Invalid(path.Child(k.name), k.value, "must be CamelCase: an upper-case letter, then letters and digits, like Widget"))
		}
	}
	if n.Kind != "" && n.Kind == n.ListKind {
		errs = append(errs, field.Invalid(path.Child("listKind"), n.ListKind, "kind and listKind cannot be the same"))
	}
	seen := sets.New[string]()
	for i, s := range n.ShortNames {
		label(path.Child("shortNames").Index(i), s, true)
		if seen.Has(s) {
			errs = append(errs, field.Duplicate(path.Child("shortNames").Index(i), s))
		}
		seen.Insert(s)
	}
	for i, c := range n.Categories {
		label(path.Child("categories").Index(i), c, true)
	}
	return errs
}

func validateCRDVersions(versions []apiextensionsv1.CustomResourceDefinitionVersion, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(versions) == 0 {
		return append(errs, field.Required(path, "must have at least one version"))
	}
	served, storage := 0, 0
	seen := sets.New[string]()
	for i := range versions {
		v := &versions[i]
		vp := path.Index(i)
		switch {
		case v.Name == "":
			errs = append(errs, field.Required(vp.Child("name"), ""))
		case len(validation.IsDNS1035Label(v.Name)) > 0:
			errs = append(errs, field.Invalid(vp.Child("name"), v.Name, strings.Join(validation.IsDNS1035Label(v.Name), "; ")))
		case seen.Has(v.Name):
			errs = append(errs, field.Duplicate(vp.Child("name"), v.Name))
		}
		seen.Insert(v.Name)
		if v.Served {
			served++
		}
		if v.Storage {
			storage++
		}
		sp := vp.Child("schema", "openAPIV3Schema")
		switch {
		case v.Schema == nil || v.Schema.OpenAPIV3Schema == nil:
			errs = append(errs, field.Required(sp, "schemas are required"))
		case v.Schema.OpenAPIV3Schema.Type != "object":
			errs = append(errs, field.Invalid(sp.Child("type"), v.Schema.OpenAPIV3Schema.Type, "must be object at the root"))
		}
		if v.Subresources != nil && v.Subresources.Scale != nil {
			errs = append(errs, validateScale(v.Subresources.Scale, vp.Child("subresources", "scale"))...)
		}
		for j, c := range v.AdditionalPrinterColumns {
			errs = append(errs, validateColumn(&c, vp.Child("additionalPrinterColumns").Index(j))...)
		}
	}
	if served == 0 {
		errs = append(errs, field.Invalid(path, len(versions), "must have at least one version with served: true"))
	}
	if storage != 1 {
		errs = append(errs, field.Invalid(path, storage, "must have exactly one version marked as storage version"))
	}
	return errs
}

func validateScale(s *apiextensionsv1.CustomResourceSubresourceScale, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	under := func(p *field.Path, v string, prefixes []string, what string) {
		if v == "" {
			errs = append(errs, field.Required(p, ""))
			return
		}
		for _, prefix := range prefixes {
			if strings.HasPrefix(v, prefix) && len(v) > len(prefix) {
				return
			}
		}
		errs = append(errs, field.Invalid(p, v, "should be a json path under "+what))
	}
	under(path.Child("specReplicasPath"), s.SpecReplicasPath, []string{".spec."}, ".spec")
	under(path.Child("statusReplicasPath"), s.StatusReplicasPath, []string{".status."}, ".status")
	if s.LabelSelectorPath != nil {
		under(path.Child("labelSelectorPath"), *s.LabelSelectorPath, []string{".spec.", ".status."}, "either .spec or .status")
	}
	return errs
}

func validateColumn(c *apiextensionsv1.CustomResourceColumnDefinition, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if c.Name == "" {
		errs = append(errs, field.Required(path.Child("name"), ""))
	}
	switch {
	case c.Type == "":
		errs = append(errs, field.Required(path.Child("type"), ""))
	case !sets.New(printerColumnTypes...).Has(c.Type):
		errs = append(errs, field.NotSupported(path.Child("type"), c.Type, printerColumnTypes))
	}
	if c.Format != "" && !sets.New(crdColumnFormats...).Has(c.Format) {
		errs = append(errs, field.NotSupported(path.Child("format"), c.Format, crdColumnFormats))
	}
	if c.JSONPath == "" {
		errs = append(errs, field.Required(path.Child("jsonPath"), ""))
	}
	if c.Priority < 0 {
		errs = append(errs, field.Invalid(path.Child("priority"), c.Priority, "must be greater than or equal to 0"))
	}
	return errs
}
