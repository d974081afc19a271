package routes

import (
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/version"
)

// WithCRDs returns a new API with the resources the CRDs declare: one resource per served version,
// with the status and scale subresources, printer columns (Name first, Age when the CRD declares
// none, as kube's CRD tables do) and schema of that version, and the storage version's hash. CRD
// groups follow the API's own groups, sorted by name; their versions are in kube's version order
// (v2, v1, v1beta1, ...), the first preferred.
//
// A CRD is rejected (as a *CRDError naming its file and document) when its group is already served
// by api, when another CRD has the same name, or when one of its names (plural, singular, short
// names, kind, list kind) is taken by another CRD of the group. The others are still added; all
// problems are returned joined.
func (a *API) WithCRDs(crds []CRD) (*API, error) {
	var errs []error
	type owner struct {
		crd  *CRD
		what string
	}
	byName := map[string]*CRD{}
	names := map[string]map[string]owner{} // group -> resource name or kind -> owner
	byGroup := map[string][]*CRD{}
	for i := range crds {
		c := &crds[i]
		d := c.Definition
		if _, ok := a.Group(d.Spec.Group); ok {
			errs = append(errs, c.errorf("spec.group: Invalid value: %q: is served by the built-in API; choose a group of your own", d.Spec.Group))
			continue
		}
		if prev, ok := byName[d.Name]; ok {
			errs = append(errs, c.errorf("metadata.name: Duplicate value: %q: also declared in %s", d.Name, prev.source()))
			continue
		}
		if names[d.Spec.Group] == nil {
			names[d.Spec.Group] = map[string]owner{}
		}
		taken := names[d.Spec.Group]
		n := d.Spec.Names
		claims := []struct{ key, field, value string }{
			{"resource:" + n.Plural, "spec.names.plural", n.Plural},
			{"kind:" + n.Kind, "spec.names.kind", n.Kind},
			{"kind:" + n.ListKind, "spec.names.listKind", n.ListKind},
		}
		if n.Singular != n.Plural {
			claims = append(claims, struct{ key, field, value string }{"resource:" + n.Singular, "spec.names.singular", n.Singular})
		}
		for i, s := range n.ShortNames {
			claims = append(claims, struct{ key, field, value string }{"resource:" + s, "spec.names.shortNames[" + strconv.Itoa(i) + "]", s})
		}
		conflict := false
		for _, cl := range claims {
			if o, ok := taken[cl.key]; ok {
				errs = append(errs, c.errorf("%s: Duplicate value: %q: already the %s of %s in %s", cl.field, cl.value, o.what, o.crd.Definition.Name, o.crd.source()))
				conflict = true
			}
		}
		if conflict {
			continue
		}
		for _, cl := range claims {
			taken[cl.key] = owner{crd: c, what: strings.TrimPrefix(cl.field, "spec.names.")}
		}
		byName[d.Name] = c
		byGroup[d.Spec.Group] = append(byGroup[d.Spec.Group], c)
	}

	groups := slices.Clone(a.groups)
	groupNames := make([]string, 0, len(byGroup))
	for g := range byGroup {
		groupNames = append(groupNames, g)
	}
	slices.Sort(groupNames)
	for _, g := range groupNames {
		groups = append(groups, crdGroup(g, byGroup[g]))
	}
	return newAPI(groups), errors.Join(errs...)
}

// crdGroup builds the group the CRDs of one group declare.
func crdGroup(name string, crds []*CRD) Group {
	byVersion := map[string][]Resource{}
	for _, c := range crds {
		d := c.Definition
		storage := ""
		for _, v := range d.Spec.Versions {
			if v.Storage {
				storage = v.Name
			}
		}
		hash := StorageVersionHash(d.Spec.Group, storage, d.Spec.Names.Kind)
		for i := range d.Spec.Versions {
			v := &d.Spec.Versions[i]
			if v.Served {
				byVersion[v.Name] = append(byVersion[v.Name], crdResource(d, v, hash))
			}
		}
	}
	versions := make([]Version, 0, len(byVersion))
	for v, rs := range byVersion {
		versions = append(versions, Version{Name: v, Resources: rs})
	}
	slices.SortFunc(versions, func(a, b Version) int { return -version.CompareKubeAwareVersionStrings(a.Name, b.Name) })
	return Group{Name: name, Versions: versions}
}

// crdResource is the resource a CRD serves at one version.
func crdResource(d *apiextensionsv1.CustomResourceDefinition, v *apiextensionsv1.CustomResourceDefinitionVersion, hash string) Resource {
	n := d.Spec.Names
	r := Resource{
		Plural:             n.Plural,
		Singular:           n.Singular,
		Kind:               n.Kind,
		ListKind:           n.ListKind,
		Namespaced:         d.Spec.Scope == apiextensionsv1.NamespaceScoped,
		Verbs:              StandardVerbs(),
		ShortNames:         n.ShortNames,
		Categories:         n.Categories,
		StorageVersionHash: hash,
		Custom:             true,
		Deprecated:         v.Deprecated,
		PrinterColumns:     []PrinterColumn{nameColumn()},
	}
	if v.DeprecationWarning != nil {
		r.DeprecationWarning = *v.DeprecationWarning
	}
	for _, f := range v.SelectableFields {
		r.SelectableFields = append(r.SelectableFields, strings.TrimPrefix(f.JSONPath, "."))
	}
	if v.Schema != nil {
		r.Schema = v.Schema.OpenAPIV3Schema
	}
	for _, c := range v.AdditionalPrinterColumns {
		desc := c.Description
		if desc == "" {
			desc = "Custom resource definition column (in JSONPath format): " + c.JSONPath
		}
		r.PrinterColumns = append(r.PrinterColumns, PrinterColumn{Name: c.Name, Type: c.Type, Format: c.Format, Description: desc, Priority: c.Priority, JSONPath: c.JSONPath})
	}
	if len(v.AdditionalPrinterColumns) == 0 {
		r.PrinterColumns = append(r.PrinterColumns, ageColumn())
	}
	if s := v.Subresources; s != nil {
		if s.Scale != nil {
			r.Subresources = append(r.Subresources, Subresource{Name: "scale", Group: "autoscaling", Version: "v1", Kind: "Scale",
				Verbs: []string{VerbGet, VerbPatch, VerbUpdate}, GoType: reflect.TypeFor[autoscalingv1.Scale]()})
		}
		if s.Status != nil {
			r.Subresources = append(r.Subresources, Subresource{Name: "status", Kind: n.Kind, Verbs: []string{VerbGet, VerbPatch, VerbUpdate}})
		}
	}
	return r
}
