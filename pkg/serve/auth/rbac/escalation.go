package rbac

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/component-helpers/auth/rbac/validation"

	"github.com/apictl/apictl/pkg/serve/auth"
	"github.com/apictl/apictl/pkg/serve/request"
)

// Escalation refuses, as kube's RBAC storage does, a write of a role or binding that would give away
// more than the writer holds: a Role or ClusterRole needs the escalate verb on it or every permission
// it grants; a binding needs the bind verb on its role or every permission of that role. Members of
// system:masters pass.
type Escalation struct {
	// Policy resolves the writer's rules and the rules of a binding's role.
	Policy *Policy
	// Authorizer answers the escalate and bind checks: the server's whole chain, as in kube.
	Authorizer auth.Authorizer
}

// fullAuthority is what setting an aggregationRule requires: it can gather anything.
var fullAuthority = []rbacv1.PolicyRule{
	{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}},
	{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}},
}

// Check vets obj, written by u through the request info describes; old is the stored object of an
// update or patch and nil for a create. Objects of other kinds pass.
func (e *Escalation) Check(ctx context.Context, u *request.User, info *request.RequestInfo, obj, old runtime.Object) error {
	if u != nil && u.InGroup(request.GroupMasters) {
		return nil
	}
	switch o := obj.(type) {
	case *rbacv1.Role:
		return e.checkRole(ctx, u, info, o.Name, o.Rules, false, obj, old)
	case *rbacv1.ClusterRole:
		aggregates := hasAggregation(o)
		if prev, ok := old.(*rbacv1.ClusterRole); ok {
			aggregates = aggregates || hasAggregation(prev)
		}
		return e.checkRole(ctx, u, info, o.Name, o.Rules, aggregates, obj, old)
	case *rbacv1.RoleBinding:
		return e.checkBinding(ctx, u, info, o.Name, o.RoleRef, info.Namespace, obj, old)
	case *rbacv1.ClusterRoleBinding:
		return e.checkBinding(ctx, u, info, o.Name, o.RoleRef, "", obj, old)
	}
	return nil
}

func hasAggregation(r *rbacv1.ClusterRole) bool {
	return r.AggregationRule != nil && len(r.AggregationRule.ClusterRoleSelectors) > 0
}

func (e *Escalation) checkRole(ctx context.Context, u *request.User, info *request.RequestInfo, name string, rules []rbacv1.PolicyRule,
	aggregates bool, obj, old runtime.Object) error {
	gr := schema.GroupResource{Group: rbacv1.GroupName, Resource: info.Resource}
	if e.allowed(ctx, u, &request.RequestInfo{IsResourceRequest: true, Verb: "escalate", APIGroup: info.APIGroup,
		Resource: info.Resource, Name: info.Name, Namespace: info.Namespace}) {
		return nil
	}
	if onlyGCFields(obj, old) {
		return nil
	}
	if err := e.confirmNoEscalation(u, info, rules); err != nil {
		return apierrors.NewForbidden(gr, name, err)
	}
	if aggregates && e.confirmNoEscalation(u, info, fullAuthority) != nil {
		return apierrors.NewForbidden(gr, name, errors.New("must have cluster-admin privileges to use the aggregationRule"))
	}
	return nil
}

func (e *Escalation) checkBinding(ctx context.Context, u *request.User, info *request.RequestInfo, name string, ref rbacv1.RoleRef,
	bindingNamespace string, obj, old runtime.Object) error {
	if onlyGCFields(obj, old) {
		return nil
	}
	bind := &request.RequestInfo{IsResourceRequest: true, Verb: "bind", APIGroup: ref.APIGroup, Name: ref.Name, Namespace: bindingNamespace}
	switch ref.Kind {
	case "ClusterRole":
		bind.Resource = ResourceClusterRoles
	case "Role":
		bind.Resource = ResourceRoles
	}
	if bind.Resource != "" && e.allowed(ctx, u, bind) {
		return nil
	}
	rules, err := e.Policy.RoleRefRules(ref, info.Namespace)
	if err != nil {
		return roleRefError(info, ref, err)
	}
	if err := e.confirmNoEscalation(u, info, rules); err != nil {
		return apierrors.NewForbidden(schema.GroupResource{Group: rbacv1.GroupName, Resource: info.Resource}, name, err)
	}
	return nil
}

// roleRefError is kube's answer for a binding whose role is not there: a 404 that, because kube's
// registry reads the role with the request's context, names the binding's resource and the role's
// name ("rolebindings.rbac.authorization.k8s.io \"x\" not found").
func roleRefError(info *request.RequestInfo, ref rbacv1.RoleRef, err error) error {
	if ref.Kind != "ClusterRole" && ref.Kind != "Role" {
		return apierrors.NewInternalError(err)
	}
	return apierrors.NewNotFound(schema.GroupResource{Group: rbacv1.GroupName, Resource: info.Resource}, ref.Name)
}

func (e *Escalation) allowed(ctx context.Context, u *request.User, info *request.RequestInfo) bool {
	if e.Authorizer == nil || u == nil {
		return false
	}
	d, _, _ := e.Authorizer.Authorize(ctx, u, info)
	return d == auth.Allow
}

// confirmNoEscalation returns kube's error when u's rules in the request's namespace do not cover
// rules.
func (e *Escalation) confirmNoEscalation(u *request.User, info *request.RequestInfo, rules []rbacv1.PolicyRule) error {
	if u == nil {
		return errors.New("no user on context")
	}
	owner, resolveErrs := e.Policy.RulesFor(u, info.Namespace)
	covered, missing := validation.Covers(owner, rules)
	if covered {
		return nil
	}
	var descriptions []string
	for _, r := range compactRules(missing) {
		if d := compactString(r); !slices.Contains(descriptions, d) {
			descriptions = append(descriptions, d)
		}
	}
	slices.Sort(descriptions)
	msg := fmt.Sprintf("user %q (groups=%q) is attempting to grant RBAC permissions not currently held:\n%s", u.Name, u.Groups, strings.Join(descriptions, "\n"))
	if len(resolveErrs) > 0 {
		msg += fmt.Sprintf("; resolution errors: [%s]", aggregateString(resolveErrs, info.Resource))
	}
	return errors.New(msg)
}

// aggregateString prints errors as kube's error aggregate does: one alone, several deduplicated in
// brackets. kube's registry reads roles here with the request's context, so a missing role is
// named after the request's resource ("clusterroles.rbac.authorization.k8s.io \"x\" not found").
func aggregateString(errs []error, resource string) string {
	var msgs []string
	for _, err := range errs {
		var nf *roleNotFound
		if errors.As(err, &nf) {
			err = notFound(resource, nf.name)
		}
		if !slices.Contains(msgs, err.Error()) {
			msgs = append(msgs, err.Error())
		}
	}
	if len(msgs) == 1 {
		return msgs[0]
	}
	return "[" + strings.Join(msgs, ", ") + "]"
}

// compactRules merges the verbs of rules about one group, resource and at most one name, as kube
// does before it lists what is missing; other rules stay as they are.
func compactRules(rules []rbacv1.PolicyRule) []rbacv1.PolicyRule {
	type simple struct {
		group, resource, name string
		named                 bool
	}
	var out []rbacv1.PolicyRule
	merged := map[simple]int{}
	var simples []rbacv1.PolicyRule
	for _, r := range rules {
		if len(r.NonResourceURLs) > 0 || len(r.ResourceNames) > 1 || len(r.APIGroups) != 1 || len(r.Resources) != 1 {
			out = append(out, r)
			continue
		}
		k := simple{group: r.APIGroups[0], resource: r.Resources[0]}
		if len(r.ResourceNames) == 1 {
			k.named, k.name = true, r.ResourceNames[0]
		}
		if i, ok := merged[k]; ok {
			simples[i].Verbs = append(simples[i].Verbs, r.Verbs...)
			continue
		}
		merged[k] = len(simples)
		simples = append(simples, rbacv1.PolicyRule{APIGroups: r.APIGroups, Resources: r.Resources,
			ResourceNames: r.ResourceNames, Verbs: slices.Clone(r.Verbs)})
	}
	return append(out, simples...)
}

// compactString is kube's one-line description of a rule in escalation errors.
func compactString(r rbacv1.PolicyRule) string {
	var parts []string
	field := func(name string, values []string) {
		if len(values) > 0 {
			parts = append(parts, fmt.Sprintf("%s:%q", name, values))
		}
	}
	field("APIGroups", r.APIGroups)
	field("Resources", r.Resources)
	field("NonResourceURLs", r.NonResourceURLs)
	field("ResourceNames", r.ResourceNames)
	field("Verbs", r.Verbs)
	return "{" + strings.Join(parts, ", ") + "}"
}

// onlyGCFields reports whether an update changes nothing but what the garbage collector changes
// (owner references, finalizers), which kube lets through without the escalation checks.
func onlyGCFields(obj, old runtime.Object) bool {
	if old == nil {
		return false
	}
	copied := obj.DeepCopyObject()
	cm, err := meta.Accessor(copied)
	if err != nil {
		return false
	}
	om, err := meta.Accessor(old)
	if err != nil {
		return false
	}
	cm.SetOwnerReferences(om.GetOwnerReferences())
	cm.SetFinalizers(om.GetFinalizers())
	cm.SetSelfLink(om.GetSelfLink())
	cm.SetManagedFields(om.GetManagedFields())
	return equality.Semantic.DeepEqual(copied, old)
}
