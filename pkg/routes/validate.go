package routes

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// printerColumnTypes are the column types kube's Table and CRDs accept.
var printerColumnTypes = []string{"integer", "number", "string", "boolean", "date"}

// Validate checks a model: names are DNS labels (groups DNS subdomains), kinds are CamelCase, no
// resource appears twice in a group version, verbs are known, subresources have kinds and verbs.
// It returns every problem, each naming the group version and resource.
func Validate(groups []Group) error {
	var errs []error
	fail := func(where, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", where, fmt.Sprintf(format, args...)))
	}
	seenGroups := map[string]bool{}
	for _, g := range groups {
		gname := g.Name
		if gname == "" {
			gname = "core"
		} else if msgs := validation.IsDNS1123Subdomain(g.Name); len(msgs) > 0 {
			fail("group "+g.Name, "is not a DNS subdomain: %s", strings.Join(msgs, "; "))
		}
		if seenGroups[g.Name] {
			fail("group "+gname, "is listed twice")
		}
		seenGroups[g.Name] = true
		if len(g.Versions) == 0 {
			fail("group "+gname, "has no versions")
		}
		seenVersions := map[string]bool{}
		for _, v := range g.Versions {
			gv := groupVersionString(g.Name, v.Name)
			if msgs := validation.IsDNS1035Label(v.Name); len(msgs) > 0 {
				fail(gv, "version %q is not a DNS label: %s", v.Name, strings.Join(msgs, "; "))
			}
			if seenVersions[v.Name] {
				fail(gv, "is listed twice")
			}
			seenVersions[v.Name] = true
			seenResources := map[string]bool{}
			for _, r := range v.Resources {
				where := gv + " " + r.Plural
				if seenResources[r.Plural] {
					fail(where, "is listed twice")
				}
				seenResources[r.Plural] = true
				errs = append(errs, validateResource(where, &r)...)
			}
		}
	}
	return errors.Join(errs...)
}

func validateResource(where string, r *Resource) []error {
	var errs []error
	fail := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", where, fmt.Sprintf(format, args...)))
	}
	checkLabel := func(what, s string) {
		if msgs := validation.IsDNS1035Label(s); len(msgs) > 0 {
			fail("%s %q is not a DNS label: %s", what, s, strings.Join(msgs, "; "))
		}
	}
	checkLabel("resource name", r.Plural)
	if r.Singular != "" {
		checkLabel("singular name", r.Singular)
	}
	if !isCamelCase(r.Kind) {
		fail("kind %q must be CamelCase, like ConfigMap", r.Kind)
	}
	// A create-only resource has no lists, so no list kind.
	if !(r.ListKind == "" && r.CreateOnly()) && !isCamelCase(r.ListKind) {
		fail("list kind %q must be CamelCase, like ConfigMapList", r.ListKind)
	}
	if len(r.Verbs) == 0 {
		fail("has no verbs")
	}
	errs = append(errs, checkVerbs(where, r.Verbs)...)
	for _, s := range r.ShortNames {
		checkLabel("short name", s)
	}
	for _, c := range r.Categories {
		checkLabel("category", c)
	}
	for _, c := range r.PrinterColumns {
		if c.Name == "" {
			fail("has a printer column without a name")
		}
		if !slices.Contains(printerColumnTypes, c.Type) {
			fail("printer column %q has type %q: use one of %s", c.Name, c.Type, strings.Join(printerColumnTypes, ", "))
		}
	}
	seen := map[string]bool{}
	for _, s := range r.Subresources {
		sw := where + "/" + s.Name
		if msgs := validation.IsDNS1035Label(s.Name); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("%s: subresource name is not a DNS label: %s", sw, strings.Join(msgs, "; ")))
		}
		if seen[s.Name] {
			errs = append(errs, fmt.Errorf("%s: is listed twice", sw))
		}
		seen[s.Name] = true
		if !isCamelCase(s.Kind) {
			errs = append(errs, fmt.Errorf("%s: kind %q must be CamelCase", sw, s.Kind))
		}
		if s.Group != "" && s.Version == "" {
			errs = append(errs, fmt.Errorf("%s: kind of group %s needs a version", sw, s.Group))
		}
		if len(s.Verbs) == 0 && len(s.ConnectMethods) == 0 {
			errs = append(errs, fmt.Errorf("%s: has neither verbs nor connect methods", sw))
		}
		errs = append(errs, checkVerbs(sw, s.Verbs)...)
		for _, m := range s.ConnectMethods {
			if !slices.Contains(connectMethods, m) {
				errs = append(errs, fmt.Errorf("%s: connect method %q is not one of %s", sw, m, strings.Join(connectMethods, ", ")))
			}
		}
		if s.ConnectSubpath && len(s.ConnectMethods) == 0 {
			errs = append(errs, fmt.Errorf("%s: a subpath needs connect methods", sw))
		}
	}
	return errs
}

// connectMethods are the HTTP methods a connect subresource may answer, as kube's proxy does.
var connectMethods = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodHead, http.MethodOptions}

func checkVerbs(where string, verbs []string) []error {
	var errs []error
	known := StandardVerbs()
	seen := map[string]bool{}
	for _, v := range verbs {
		if !slices.Contains(known, v) {
			errs = append(errs, fmt.Errorf("%s: verb %q is not one of %s", where, v, strings.Join(known, ", ")))
		}
		if seen[v] {
			errs = append(errs, fmt.Errorf("%s: verb %q is listed twice", where, v))
		}
		seen[v] = true
	}
	return errs
}

// isCamelCase accepts kinds the way kube spells them: an upper-case ASCII letter, then ASCII
// letters and digits.
func isCamelCase(s string) bool {
	if s == "" || s[0] < 'A' || s[0] > 'Z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// groupVersionString spells a group version as paths and runtime-config do: v1 for the core group.
func groupVersionString(group, version string) string {
	if group == "" {
		return version
	}
	return group + "/" + version
}

func sortResources(rs []Resource) {
	slices.SortFunc(rs, func(a, b Resource) int { return strings.Compare(a.Plural, b.Plural) })
	for i := range rs {
		slices.SortFunc(rs[i].Subresources, func(a, b Subresource) int { return strings.Compare(a.Name, b.Name) })
	}
}
