package routes

import (
	"fmt"
	"slices"
	"strings"

	"github.com/apictl/apictl/internal/typo"
)

// Filter selects routes for printing. Empty fields select everything.
type Filter struct {
	// Group selects a group; "core" is the core group.
	Group string
	// Version selects a version, such as v1.
	Version string
	// Resource selects a resource with its subresources (namespaces), or one subresource
	// (namespaces/status).
	Resource string
	// Verb selects a discovery verb (list, get, ...); non-resource routes have the verb get.
	Verb string
	// NonResource adds the non-resource routes; resource filters do not apply to them.
	NonResource bool
}

// Check reports filter values that name nothing in api, so that a typo is an error rather than an
// empty table.
func (f Filter) Check(api *API) error {
	group := f.Group
	if group == "core" {
		group = GroupCore
	}
	var versions []Version
	if f.Group != "" {
		g, ok := api.Group(group)
		if !ok {
			var names []string
			for _, g := range api.Groups() {
				names = append(names, displayGroup(g.Name))
			}
			return fmt.Errorf("group %q is not served: use one of %s", f.Group, strings.Join(names, ", "))
		}
		versions = g.Versions
	} else {
		for _, g := range api.Groups() {
			versions = append(versions, g.Versions...)
		}
	}
	if f.Version != "" && !slices.ContainsFunc(versions, func(v Version) bool { return v.Name == f.Version }) {
		return fmt.Errorf("version %q is not served%s", f.Version, inGroup(f.Group))
	}
	if f.Resource != "" {
		plural, sub, hasSub := strings.Cut(f.Resource, "/")
		found := false
		for _, v := range versions {
			if f.Version != "" && v.Name != f.Version {
				continue
			}
			for i := range v.Resources {
				r := &v.Resources[i]
				if r.Plural != plural {
					continue
				}
				if _, ok := r.Subresource(sub); !hasSub || ok {
					found = true
				}
			}
		}
		if !found {
			if s := suggestResource(f.Resource, versions, f.Version); s != "" {
				return fmt.Errorf("resource %q is not served%s: did you mean %q?", f.Resource, inGroup(f.Group), s)
			}
			return fmt.Errorf("resource %q is not served%s: apictl routes lists the resources", f.Resource, inGroup(f.Group))
		}
	}
	if f.Verb != "" && f.Verb != "get" && !slices.Contains(StandardVerbs(), f.Verb) {
		return fmt.Errorf("verb %q is not a discovery verb: use one of %s", f.Verb, strings.Join(StandardVerbs(), ", "))
	}
	return nil
}

// suggestResource names the resource (or subresource) that name most likely meant: the plural of a
// resource whose singular, kind or short name it is, as kubectl takes them (configmap, ConfigMap, cm
// for configmaps), or else the served name nearest to it as a typo.
func suggestResource(name string, versions []Version, version string) string {
	first, sub, hasSub := strings.Cut(name, "/")
	var names []string
	alias := ""
	for _, v := range versions {
		if version != "" && v.Name != version {
			continue
		}
		for i := range v.Resources {
			r := &v.Resources[i]
			names = append(names, r.Plural)
			for _, s := range r.Subresources {
				names = append(names, r.Plural+"/"+s.Name)
			}
			// The plural itself is served; only its subresource can be wrong, which the typo search finds.
			if alias != "" || first == r.Plural || !namesResource(r, first) {
				continue
			}
			alias = r.Plural
			if _, ok := r.Subresource(sub); hasSub && ok {
				alias += "/" + sub
			}
		}
	}
	if alias != "" {
		return alias
	}
	return typo.Nearest(strings.ToLower(name), names)
}

// namesResource reports whether s is one of the names kubectl accepts for r.
func namesResource(r *Resource, s string) bool {
	if strings.EqualFold(s, r.Plural) || strings.EqualFold(s, r.Singular) || strings.EqualFold(s, r.Kind) {
		return true
	}
	return slices.ContainsFunc(r.ShortNames, func(n string) bool { return strings.EqualFold(s, n) })
}

func inGroup(g string) string {
	if g == "" {
		return ""
	}
	return " in group " + g
}

// Filter returns the routes f selects, in table order.
func (t Table) Filter(f Filter) Table {
	group := f.Group
	if group == "core" {
		group = GroupCore
	}
	plural, sub, hasSub := strings.Cut(f.Resource, "/")
	var out []Route
	for _, r := range t.Routes {
		if f.Verb != "" && r.Verb != f.Verb {
			continue
		}
		if !r.IsResource() {
			if f.NonResource {
				out = append(out, r)
			}
			continue
		}
		switch {
		case f.Group != "" && r.Group != group,
			f.Version != "" && r.Version != f.Version,
			f.Resource != "" && r.Resource != plural,
			hasSub && r.Subresource != sub:
			continue
		}
		out = append(out, r)
	}
	return Table{Routes: out}
}
