// Ported from k8s.io/kubernetes v1.37.2 pkg/apis/rbac/validation/validation.go and
// pkg/apis/rbac/v1/defaults.go.

package rbac

import (
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// roleStrategy checks policy rules as kube's RBAC validation does.
type roleStrategy struct {
	namespaced bool
}

func (roleStrategy) PrepareForCreate(runtime.Object)                 {}
func (roleStrategy) PrepareForUpdate(runtime.Object, runtime.Object) {}

func (r roleStrategy) Validate(obj runtime.Object) field.ErrorList {
	return r.validateWith(obj, metav1validation.LabelSelectorValidationOptions{})
}

// validateWith checks the rules and, for a ClusterRole, its aggregation rule's selectors, with opts
// for the selectors' label values (kube's ClusterRoleValidationOptions).
func (r roleStrategy) validateWith(obj runtime.Object, opts metav1validation.LabelSelectorValidationOptions) field.ErrorList {
	var rules []rbacv1.PolicyRule
	var aggregation *rbacv1.AggregationRule
	if role, ok := obj.(*rbacv1.Role); ok {
		rules = role.Rules
	} else {
		cr := obj.(*rbacv1.ClusterRole)
		rules, aggregation = cr.Rules, cr.AggregationRule
	}
	var errs, declarative field.ErrorList
	for i, rule := range rules {
		fld := field.NewPath("rules").Index(i)
		if len(rule.Verbs) == 0 {
			declarative = append(declarative, field.Required(fld.Child("verbs"), ""))
		}
		errs = append(errs, validatePolicyRule(rule, r.namespaced, fld)...)
	}
	if aggregation != nil {
		errs = append(errs, validateAggregationRule(aggregation, opts)...)
	}
	return append(errs, declarative...)
}

// ValidateUpdate allows the label values an existing aggregation rule already selects by, as kube
// does, so that an object stored before a stricter rule can still be changed.
func (r roleStrategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	var opts metav1validation.LabelSelectorValidationOptions
	if cr, ok := old.(*rbacv1.ClusterRole); ok && cr.AggregationRule != nil {
		for i := range cr.AggregationRule.ClusterRoleSelectors {
			if metav1validation.LabelSelectorHasInvalidLabelValue(&cr.AggregationRule.ClusterRoleSelectors[i]) {
				opts.AllowInvalidLabelValueInSelector = true
			}
		}
	}
	return r.validateWith(obj, opts)
}

// validateAggregationRule checks a ClusterRole's selectors with apimachinery's label selector
// validation, then that each converts to a selector, with kube's words (ValidateClusterRole): an
// operator such as Near fails both, and the second error quotes the selector it could not make, null.
func validateAggregationRule(rule *rbacv1.AggregationRule, opts metav1validation.LabelSelectorValidationOptions) field.ErrorList {
	var errs field.ErrorList
	selectorsPath := field.NewPath("aggregationRule", "clusterRoleSelectors")
	if len(rule.ClusterRoleSelectors) == 0 {
		errs = append(errs, field.Required(selectorsPath, "at least one clusterRoleSelector required if aggregationRule is non-nil"))
	}
	for i := range rule.ClusterRoleSelectors {
		fld := selectorsPath.Index(i)
		errs = append(errs, metav1validation.ValidateLabelSelector(&rule.ClusterRoleSelectors[i], opts, fld)...)
		if selector, err := metav1.LabelSelectorAsSelector(&rule.ClusterRoleSelectors[i]); err != nil {
			errs = append(errs, field.Invalid(fld, selector, "invalid label selector."))
		}
	}
	return errs
}

// kube 1.37 checks some RBAC fields with declarative validation, which takes over from the
// handwritten checks it covers: their errors come after all the others, in the order of the type's
// fields, and carry no detail (a rule without verbs is "Required value", where the handwritten check
// said "verbs must contain at least one value"). The validators here keep those apart to match.

// validatePolicyRule: resource rules need apiGroups and resources; non-resource URLs exist only at
// the cluster scope and never mix with resources. (That a rule needs verbs is declarative.)
func validatePolicyRule(rule rbacv1.PolicyRule, namespaced bool, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
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

// bindingStrategy checks roleRef and subjects; roleRef cannot change once set.
type bindingStrategy struct {
	namespaced bool
}

func (bindingStrategy) PrepareForCreate(runtime.Object)                 {}
func (bindingStrategy) PrepareForUpdate(runtime.Object, runtime.Object) {}

// Default gives a roleRef, and a User or Group subject, without apiGroup the RBAC group, as kube's
// decoder does (k8s.io/kubernetes v1.37.2 pkg/apis/rbac/v1/defaults.go: SetDefaults_RoleBinding,
// SetDefaults_ClusterRoleBinding, SetDefaults_Subject) before anything validates or records the object.
func (b bindingStrategy) Default(obj runtime.Object) {
	var ref *rbacv1.RoleRef
	if rb, ok := obj.(*rbacv1.RoleBinding); ok {
		ref = &rb.RoleRef
	} else {
		ref = &obj.(*rbacv1.ClusterRoleBinding).RoleRef
	}
	if ref.APIGroup == "" {
		ref.APIGroup = rbacv1.GroupName
	}
	_, subjects := b.parts(obj)
	for i := range subjects {
		if s := &subjects[i]; s.APIGroup == "" && (s.Kind == rbacv1.UserKind || s.Kind == rbacv1.GroupKind) {
			s.APIGroup = rbacv1.GroupName
		}
	}
}

func (b bindingStrategy) parts(obj runtime.Object) (rbacv1.RoleRef, []rbacv1.Subject) {
	if rb, ok := obj.(*rbacv1.RoleBinding); ok {
		return rb.RoleRef, rb.Subjects
	}
	crb := obj.(*rbacv1.ClusterRoleBinding)
	return crb.RoleRef, crb.Subjects
}

func (b bindingStrategy) Validate(obj runtime.Object) field.ErrorList {
	ref, subjects := b.parts(obj)
	var errs, declarative field.ErrorList
	// Declarative, in the type's field order: subjects, then roleRef.
	for i, s := range subjects {
		if s.Name == "" {
			declarative = append(declarative, field.Required(field.NewPath("subjects").Index(i).Child("name"), ""))
		}
	}
	if ref.Name == "" {
		declarative = append(declarative, field.Required(field.NewPath("roleRef", "name"), ""))
	}
	refPath := field.NewPath("roleRef")
	if ref.APIGroup != rbacv1.GroupName {
		errs = append(errs, field.NotSupported(refPath.Child("apiGroup"), ref.APIGroup, []string{rbacv1.GroupName}))
	}
	roleKinds := []string{"ClusterRole"}
	if b.namespaced {
		roleKinds = []string{"Role", "ClusterRole"}
	}
	if !slices.Contains(roleKinds, ref.Kind) {
		errs = append(errs, field.NotSupported(refPath.Child("kind"), ref.Kind, roleKinds))
	}
	if ref.Name != "" {
		for _, msg := range Name(ref.Name, false) {
			errs = append(errs, field.Invalid(refPath.Child("name"), ref.Name, msg))
		}
	}
	for i, s := range subjects {
		errs = append(errs, validateSubject(s, b.namespaced, field.NewPath("subjects").Index(i))...)
	}
	return append(errs, declarative...)
}

func (b bindingStrategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	errs := b.Validate(obj)
	ref, _ := b.parts(obj)
	oldRef, _ := b.parts(old)
	if ref != oldRef {
		// kube compares and prints its internal RoleRef, whose fields have no JSON names.
		errs = append(errs, apivalidation.ValidateImmutableField(internalRoleRef(ref), internalRoleRef(oldRef), field.NewPath("roleRef"))...)
	}
	return errs
}

// internalRoleRef is kube's internal rbac.RoleRef: printed in an error, its fields keep their Go names
// ({"APIGroup":"rbac.authorization.k8s.io","Kind":"Role","Name":"x"}).
type internalRoleRef struct {
	APIGroup string
	Kind     string
	Name     string
}

func validateSubject(s rbacv1.Subject, namespaced bool, fld *field.Path) field.ErrorList {
	var errs field.ErrorList // (a subject without name is declarative)
	switch s.Kind {
	case rbacv1.ServiceAccountKind:
		if s.Name != "" {
			for _, msg := range apivalidation.ValidateServiceAccountName(s.Name, false) {
				errs = append(errs, field.Invalid(fld.Child("name"), s.Name, msg))
			}
		}
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
