package registry

import (
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// roleRules checks policy rules as kube's RBAC validation does.
type roleRules struct {
	noRules
	namespaced bool
}

func (r roleRules) validate(obj runtime.Object) field.ErrorList {
	var rules []rbacv1.PolicyRule
	if role, ok := obj.(*rbacv1.Role); ok {
		rules = role.Rules
	} else {
		rules = obj.(*rbacv1.ClusterRole).Rules
	}
	var errs field.ErrorList
	for i, rule := range rules {
		errs = append(errs, validatePolicyRule(rule, r.namespaced, field.NewPath("rules").Index(i))...)
	}
	return errs
}

func (r roleRules) validateUpdate(obj, _ runtime.Object) field.ErrorList { return r.validate(obj) }

// validatePolicyRule: a rule needs verbs; resource rules need apiGroups and resources; non-resource
// URLs exist only at the cluster scope and never mix with resources.
func validatePolicyRule(rule rbacv1.PolicyRule, namespaced bool, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(rule.Verbs) == 0 {
		errs = append(errs, field.Required(fld.Child("verbs"), "verbs must contain at least one value"))
	}
	if len(rule.NonResourceURLs) > 0 {
		if namespaced {
			errs = append(errs, field.Invalid(fld.Child("nonResourceURLs"), rule.NonResourceURLs, "namespaced rules cannot apply to non-resource URLs"))
		}
		if len(rule.APIGroups) > 0 || len(rule.Resources) > 0 || len(rule.ResourceNames) > 0 {
			errs = append(errs, field.Invalid(fld.Child("nonResourceURLs"), rule.NonResourceURLs, "rules cannot apply to both regular resources and non-resource URLs"))
		}
		return errs
	}
	if len(rule.APIGroups) == 0 {
		errs = append(errs, field.Required(fld.Child("apiGroups"), "resource rules must supply at least one api group"))
	}
	if len(rule.Resources) == 0 {
		errs = append(errs, field.Required(fld.Child("resources"), "resource rules must supply at least one resource"))
	}
	return errs
}

// bindingRules checks roleRef and subjects; roleRef cannot change once set.
type bindingRules struct {
	noRules
	namespaced bool
}

func (b bindingRules) parts(obj runtime.Object) (rbacv1.RoleRef, []rbacv1.Subject) {
	if rb, ok := obj.(*rbacv1.RoleBinding); ok {
		return rb.RoleRef, rb.Subjects
	}
	crb := obj.(*rbacv1.ClusterRoleBinding)
	return crb.RoleRef, crb.Subjects
}

func (b bindingRules) validate(obj runtime.Object) field.ErrorList {
	ref, subjects := b.parts(obj)
	var errs field.ErrorList
	refPath := field.NewPath("roleRef")
	if ref.APIGroup != rbacv1.GroupName {
		errs = append(errs, field.NotSupported(refPath.Child("apiGroup"), ref.APIGroup, []string{rbacv1.GroupName}))
	}
	kinds := []string{"ClusterRole"}
	if b.namespaced {
		kinds = []string{"Role", "ClusterRole"}
	}
	if !slices.Contains(kinds, ref.Kind) {
		errs = append(errs, field.NotSupported(refPath.Child("kind"), ref.Kind, kinds))
	}
	if ref.Name == "" {
		errs = append(errs, field.Required(refPath.Child("name"), ""))
	} else {
		for _, msg := range rbacName(ref.Name, false) {
			errs = append(errs, field.Invalid(refPath.Child("name"), ref.Name, msg))
		}
	}
	for i, s := range subjects {
		errs = append(errs, validateSubject(s, b.namespaced, field.NewPath("subjects").Index(i))...)
	}
	return errs
}

func (b bindingRules) validateUpdate(obj, old runtime.Object) field.ErrorList {
	errs := b.validate(obj)
	ref, _ := b.parts(obj)
	oldRef, _ := b.parts(old)
	if ref != oldRef {
		errs = append(errs, field.Invalid(field.NewPath("roleRef"), ref, "cannot change roleRef"))
	}
	return errs
}

func validateSubject(s rbacv1.Subject, namespaced bool, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.Name == "" {
		errs = append(errs, field.Required(fld.Child("name"), ""))
	}
	switch s.Kind {
	case rbacv1.ServiceAccountKind:
		if s.APIGroup != "" {
			errs = append(errs, field.NotSupported(fld.Child("apiGroup"), s.APIGroup, []string{""}))
		}
		if !namespaced && s.Namespace == "" {
			errs = append(errs, field.Required(fld.Child("namespace"), ""))
		}
	case rbacv1.UserKind, rbacv1.GroupKind:
		if s.APIGroup != rbacv1.GroupName {
			errs = append(errs, field.NotSupported(fld.Child("apiGroup"), s.APIGroup, []string{rbacv1.GroupName}))
		}
	default:
		errs = append(errs, field.NotSupported(fld.Child("kind"), s.Kind, []string{rbacv1.ServiceAccountKind, rbacv1.UserKind, rbacv1.GroupKind}))
	}
	return errs
}
