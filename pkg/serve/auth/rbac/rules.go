// Package rbac is kube's RBAC authorizer: Roles and ClusterRoles grant rules, RoleBindings and
// ClusterRoleBindings give them to users, groups and service accounts. The objects come from the
// watch caches into an immutable index, rebuilt off the request path whenever one of them changes and
// swapped whole, so that a decision is a few map lookups and rule scans without allocation.
package rbac

import (
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/apictl/apictl/pkg/serve/request"
)

// ruleAllows reports whether rule grants the request info describes, with kube's matching: "*"
// matches any verb, group, resource or URL; a resource "<r>/<sub>" names one subresource and "*/<sub>"
// that subresource of every resource (kube has no "<r>/*"); resourceNames, when given, restrict the
// request's name; a non-resource URL ending in "*" matches every path it prefixes.
func ruleAllows(rule *rbacv1.PolicyRule, info *request.RequestInfo) bool {
	if !has(rule.Verbs, info.Verb) {
		return false
	}
	if !info.IsResourceRequest {
		return urlMatches(rule.NonResourceURLs, info.Path)
	}
	return has(rule.APIGroups, info.APIGroup) &&
		resourceMatches(rule.Resources, info.Resource, info.Subresource) &&
		nameMatches(rule.ResourceNames, info.Name)
}

// has reports whether set holds want or "*".
func has(set []string, want string) bool {
	for _, s := range set {
		if s == want || s == rbacv1.VerbAll {
			return true
		}
	}
	return false
}

// resourceMatches compares each rule resource with "<resource>" or "<resource>/<sub>" without
// building the combined string.
func resourceMatches(rules []string, resource, sub string) bool {
	for _, r := range rules {
		switch {
		case r == rbacv1.ResourceAll:
			return true
		case sub == "":
			if r == resource {
				return true
			}
		case len(r) == len(resource)+1+len(sub) && strings.HasPrefix(r, resource) && r[len(resource)] == '/' && strings.HasSuffix(r, sub):
			return true
		case len(r) == len(sub)+2 && strings.HasPrefix(r, "*/") && strings.HasSuffix(r, sub):
			return true
		}
	}
	return false
}

func nameMatches(names []string, name string) bool {
	if len(names) == 0 {
		return true
	}
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}

func urlMatches(urls []string, path string) bool {
	for _, u := range urls {
		switch {
		case u == rbacv1.NonResourceAll || u == path:
			return true
		case strings.HasSuffix(u, "*") && strings.HasPrefix(path, u[:len(u)-1]):
			return true
		}
	}
	return false
}
