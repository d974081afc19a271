package rbac

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/apictl/apictl/pkg/serve/request"
)

// subjectKey names who a binding speaks of: a user (service accounts are the users
// system:serviceaccount:<ns>:<name>) or a group.
type subjectKey struct {
	group bool
	name  string
}

// grant is what one binding gives its subjects: the rules of the role it names or, when that role
// does not exist, the error kube's rule resolver reports for it.
type grant struct {
	rules []rbacv1.PolicyRule
	err   error
	// binding, roleRef, namespace ("" for a ClusterRoleBinding) and subjects are the binding's, for
	// the reasons access reviews give (allowReason); formatted only then, so rebuilding the index on
	// every change of a binding costs no formatting.
	binding   string
	roleRef   rbacv1.RoleRef
	namespace string
	subjects  []rbacv1.Subject
}

// index is one immutable view of every role and binding, arranged for decisions: the grants of the
// ClusterRoleBindings by subject, and those of the RoleBindings by namespace and subject.
type index struct {
	cluster    map[subjectKey][]*grant
	namespaces map[string]map[subjectKey][]*grant

	roles               map[nsName]*rbacv1.Role
	clusterRoles        map[string]*rbacv1.ClusterRole
	clusterRoleBindings map[string]*rbacv1.ClusterRoleBinding
}

type nsName struct{ namespace, name string }

// objects are the decoded roles and bindings the index is built from, by storage key.
type objects struct {
	roles               map[string]*rbacv1.Role
	clusterRoles        map[string]*rbacv1.ClusterRole
	roleBindings        map[string]*rbacv1.RoleBinding
	clusterRoleBindings map[string]*rbacv1.ClusterRoleBinding
}

func newObjects() *objects {
	return &objects{
		roles:               map[string]*rbacv1.Role{},
		clusterRoles:        map[string]*rbacv1.ClusterRole{},
		roleBindings:        map[string]*rbacv1.RoleBinding{},
		clusterRoleBindings: map[string]*rbacv1.ClusterRoleBinding{},
	}
}

// buildIndex resolves every binding's role once, so that a decision never looks a role up.
func buildIndex(o *objects) *index {
	x := &index{
		cluster:      map[subjectKey][]*grant{},
		namespaces:   map[string]map[subjectKey][]*grant{},
		roles:        make(map[nsName]*rbacv1.Role, len(o.roles)),
		clusterRoles: make(map[string]*rbacv1.ClusterRole, len(o.clusterRoles)),

		clusterRoleBindings: make(map[string]*rbacv1.ClusterRoleBinding, len(o.clusterRoleBindings)),
	}
	for _, r := range o.roles {
		x.roles[nsName{r.Namespace, r.Name}] = r
	}
	for _, r := range o.clusterRoles {
		x.clusterRoles[r.Name] = r
	}
	// Bindings in storage-key order, so that an allow reason and the order of a rules review do not
	// change between runs (kube's follow its cache's map order).
	for _, k := range slices.Sorted(maps.Keys(o.clusterRoleBindings)) {
		b := o.clusterRoleBindings[k]
		x.clusterRoleBindings[b.Name] = b
		rules, err := x.roleRefRules(b.RoleRef, "")
		g := &grant{rules: rules, err: err, binding: b.Name, roleRef: b.RoleRef, subjects: b.Subjects}
		for _, s := range b.Subjects {
			if k, ok := keyOf(s, ""); ok {
				x.cluster[k] = append(x.cluster[k], g)
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(o.roleBindings)) {
		b := o.roleBindings[k]
		rules, err := x.roleRefRules(b.RoleRef, b.Namespace)
		g := &grant{rules: rules, err: err, binding: b.Name, roleRef: b.RoleRef, namespace: b.Namespace, subjects: b.Subjects}
		bySubject := x.namespaces[b.Namespace]
		if bySubject == nil {
			bySubject = map[subjectKey][]*grant{}
			x.namespaces[b.Namespace] = bySubject
		}
		for _, s := range b.Subjects {
			if k, ok := keyOf(s, b.Namespace); ok {
				bySubject[k] = append(bySubject[k], g)
			}
		}
	}
	return x
}

// keyOf says whom subject s of a binding in namespace names, as kube's appliesToUser matches them: a
// service account without a namespace is one of the binding's namespace.
func keyOf(s rbacv1.Subject, namespace string) (subjectKey, bool) {
	switch s.Kind {
	case rbacv1.UserKind:
		return subjectKey{name: s.Name}, true
	case rbacv1.GroupKind:
		return subjectKey{group: true, name: s.Name}, true
	case rbacv1.ServiceAccountKind:
		if s.Namespace != "" {
			namespace = s.Namespace
		}
		if namespace == "" {
			return subjectKey{}, false
		}
		return subjectKey{name: ServiceAccountUser(namespace, s.Name)}, true
	}
	return subjectKey{}, false
}

// ServiceAccountUser is the user name of service account name in namespace.
func ServiceAccountUser(namespace, name string) string {
	return "system:serviceaccount:" + namespace + ":" + name
}

// roleRefRules are the rules of the role a binding in namespace names, or kube's error for a role
// that is not there.
func (x *index) roleRefRules(ref rbacv1.RoleRef, namespace string) ([]rbacv1.PolicyRule, error) {
	switch ref.Kind {
	case "Role":
		r, ok := x.roles[nsName{namespace, ref.Name}]
		if !ok {
			return nil, notFound("role", ref.Name)
		}
		return r.Rules, nil
	case "ClusterRole":
		r, ok := x.clusterRoles[ref.Name]
		if !ok {
			return nil, notFound("clusterrole", ref.Name)
		}
		return r.Rules, nil
	}
	return nil, fmt.Errorf("unsupported role reference kind: %q", ref.Kind)
}

// roleNotFound is a binding's role that is not there. Its text is the lister's NotFound error that
// kube's RBAC authorizer quotes ("clusterrole.rbac.authorization.k8s.io \"x\" not found").
type roleNotFound struct {
	resource, name string
}

func (e *roleNotFound) Error() string {
	return fmt.Sprintf("%s.%s %q not found", e.resource, rbacv1.GroupName, e.name)
}

func notFound(resource, name string) error { return &roleNotFound{resource: resource, name: name} }

// allows reports whether a binding grants u what info asks: ClusterRoleBindings anywhere, and
// RoleBindings of the request's namespace. It allocates nothing.
func (x *index) allows(u *request.User, info *request.RequestInfo) bool {
	if allowedBy(x.cluster, u, info) {
		return true
	}
	if info.Namespace == "" {
		return false
	}
	if bySubject, ok := x.namespaces[info.Namespace]; ok {
		return allowedBy(bySubject, u, info)
	}
	return false
}

func allowedBy(bySubject map[subjectKey][]*grant, u *request.User, info *request.RequestInfo) bool {
	if len(bySubject) == 0 {
		return false
	}
	if grantsAllow(bySubject[subjectKey{name: u.Name}], info) {
		return true
	}
	for _, g := range u.Groups {
		if grantsAllow(bySubject[subjectKey{group: true, name: g}], info) {
			return true
		}
	}
	return false
}

func grantsAllow(grants []*grant, info *request.RequestInfo) bool {
	for _, g := range grants {
		for i := range g.rules {
			if ruleAllows(&g.rules[i], info) {
				return true
			}
		}
	}
	return false
}

// visit calls fn with each grant that applies to u in namespace, those of ClusterRoleBindings first
// and then those of the namespace's RoleBindings, as kube's rule resolver visits them; fn returns
// false to stop.
func (x *index) visit(u *request.User, namespace string, fn func(*grant) bool) {
	if !visitScope(x.cluster, u, fn) || namespace == "" {
		return
	}
	visitScope(x.namespaces[namespace], u, fn)
}

func visitScope(bySubject map[subjectKey][]*grant, u *request.User, fn func(*grant) bool) bool {
	if len(bySubject) == 0 {
		return true
	}
	for _, g := range bySubject[subjectKey{name: u.Name}] {
		if !fn(g) {
			return false
		}
	}
	for _, group := range u.Groups {
		for _, g := range bySubject[subjectKey{group: true, name: group}] {
			if !fn(g) {
				return false
			}
		}
	}
	return true
}

// denialReason is kube's RBAC reason for a denial: the errors met resolving the roles of the bindings
// that apply, deduplicated as an error aggregate prints them; "" when there were none.
func (x *index) denialReason(u *request.User, namespace string) string {
	var msgs []string
	x.visit(u, namespace, func(g *grant) bool {
		if g.err != nil && !slices.Contains(msgs, g.err.Error()) {
			msgs = append(msgs, g.err.Error())
		}
		return true
	})
	switch len(msgs) {
	case 0:
		return ""
	case 1:
		return "RBAC: " + msgs[0]
	}
	return "RBAC: [" + strings.Join(msgs, ", ") + "]"
}

// rulesFor are every rule that applies to u in namespace, and the errors met resolving them, as
// kube's RulesFor returns them.
func (x *index) rulesFor(u *request.User, namespace string) ([]rbacv1.PolicyRule, []error) {
	var rules []rbacv1.PolicyRule
	var errs []error
	x.visit(u, namespace, func(g *grant) bool {
		if g.err != nil {
			errs = append(errs, g.err)
		}
		rules = append(rules, g.rules...)
		return true
	})
	return rules, errs
}

// allowReason is kube's RBAC reason for an Allow: the first binding that grants what info asks, its
// role and the subject that made it apply, ClusterRoleBindings first (kube walks bindings in its
// cache's order, so with several grants it may name another one). "" when nothing allows it.
func (x *index) allowReason(u *request.User, info *request.RequestInfo) string {
	reason := ""
	x.visit(u, info.Namespace, func(g *grant) bool {
		for i := range g.rules {
			if ruleAllows(&g.rules[i], info) {
				reason = "RBAC: allowed by " + g.source() + " to " + g.subjectFor(u)
				return false
			}
		}
		return true
	})
	return reason
}

// source names the binding and its role as kube's allow reasons do: ClusterRoleBinding "b" of
// ClusterRole "r", RoleBinding "b/namespace" of Role "r".
func (g *grant) source() string {
	if g.namespace == "" {
		return fmt.Sprintf("ClusterRoleBinding %q of %s %q", g.binding, g.roleRef.Kind, g.roleRef.Name)
	}
	return fmt.Sprintf("RoleBinding %q of %s %q", g.binding+"/"+g.namespace, g.roleRef.Kind, g.roleRef.Name)
}

// subjectFor describes the subject of the grant's binding that names u, as kube's describeSubject
// does: Kind "name", with a service account as "name/namespace".
func (g *grant) subjectFor(u *request.User) string {
	for _, s := range g.subjects {
		k, ok := keyOf(s, g.namespace)
		if !ok || (k.group && !u.InGroup(k.name)) || (!k.group && k.name != u.Name) {
			continue
		}
		if s.Kind == rbacv1.ServiceAccountKind {
			ns := s.Namespace
			if ns == "" {
				ns = g.namespace
			}
			return fmt.Sprintf("%s %q", s.Kind, s.Name+"/"+ns)
		}
		return fmt.Sprintf("%s %q", s.Kind, s.Name)
	}
	return ""
}
