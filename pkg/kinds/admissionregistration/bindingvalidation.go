// Ported from k8s.io/kubernetes v1.37.2 pkg/apis/admissionregistration/validation/validation.go
// (the policy bindings' validation).

package admissionregistration

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The validation of policy bindings, as kube's admissionregistration validation writes it.

func validateValidatingBinding(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(&b.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	fld := field.NewPath("spec")
	errs = append(errs, validatePolicyName(b.Spec.PolicyName, fld.Child("policyName"))...)
	errs = append(errs, validateParamRef(b.Spec.ParamRef, fld.Child("paramRef"))...)
	errs = append(errs, validateMatchResources(b.Spec.MatchResources, fld.Child("matchResources"))...)
	return append(errs, validateValidationActions(b.Spec.ValidationActions, fld.Child("validationActions"))...)
}

func validateMutatingBinding(b *admissionregistrationv1.MutatingAdmissionPolicyBinding) field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(&b.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	fld := field.NewPath("spec")
	errs = append(errs, validatePolicyName(b.Spec.PolicyName, fld.Child("policyName"))...)
	errs = append(errs, validateParamRef(b.Spec.ParamRef, fld.Child("paramRef"))...)
	errs = append(errs, validateMatchResources(b.Spec.MatchResources, fld.Child("matchResources"))...)
	if b.Spec.MatchResources != nil {
		errs = append(errs, mutatingOperations(b.Spec.MatchResources.ResourceRules, fld.Child("matchResources", "resourceRules", "operations"))...)
	}
	return errs
}

func validatePolicyName(name string, fld *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(fld, "")}
	}
	var errs field.ErrorList
	for _, msg := range apivalidation.NameIsDNSSubdomain(name, false) {
		errs = append(errs, field.Invalid(fld, name, msg))
	}
	return errs
}

// validateParamRef requires exactly one of name and selector, and a parameterNotFoundAction.
func validateParamRef(pr *admissionregistrationv1.ParamRef, fld *field.Path) field.ErrorList {
	if pr == nil {
		return nil
	}
	var errs field.ErrorList
	const exclusive = `name and selector are mutually exclusive`
	if pr.Name != "" {
		for _, msg := range content.IsPathSegmentName(pr.Name) {
			errs = append(errs, field.Invalid(fld.Child("name"), pr.Name, msg))
		}
		if pr.Selector != nil {
			errs = append(errs, field.Forbidden(fld.Child("name"), exclusive))
		}
	}
	if pr.Selector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(pr.Selector, metav1validation.LabelSelectorValidationOptions{}, fld.Child("selector"))...)
		if pr.Name != "" {
			errs = append(errs, field.Forbidden(fld.Child("selector"), exclusive))
		}
	}
	if pr.Name == "" && pr.Selector == nil {
		errs = append(errs, field.Required(fld, `one of name or selector must be specified`))
	}
	switch a := pr.ParameterNotFoundAction; {
	case a == nil || *a == "":
		errs = append(errs, field.Required(fld.Child("parameterNotFoundAction"), ""))
	case *a != admissionregistrationv1.DenyAction && *a != admissionregistrationv1.AllowAction:
		// kube passes the pointer, which the error prints as the value it points to.
		errs = append(errs, field.NotSupported(fld.Child("parameterNotFoundAction"), a,
			[]string{string(admissionregistrationv1.DenyAction), string(admissionregistrationv1.AllowAction)}))
	}
	return errs
}

// validateValidationActions: known, unique, not Deny with Warn, at least one.
func validateValidationActions(actions []admissionregistrationv1.ValidationAction, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, a := range actions {
		if !validValidationActions.Has(string(a)) {
			errs = append(errs, field.NotSupported(fld.Index(i), a, sets.List(validValidationActions)))
		}
		if seen.Has(string(a)) {
			errs = append(errs, field.Duplicate(fld.Index(i), a))
		}
		seen.Insert(string(a))
	}
	if seen.Has(string(admissionregistrationv1.Deny)) && seen.Has(string(admissionregistrationv1.Warn)) {
		errs = append(errs, field.Invalid(fld, actions, "must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)"))
	}
	if len(seen) == 0 {
		errs = append(errs, field.Required(fld, "at least one validation action is required"))
	}
	return errs
}

// declarativeBindingErrors applies kube 1.37's declarative validation of a
// ValidatingAdmissionPolicyBinding (beta, enforced): spec.policyName and spec.validationActions
// are required there, and those declarative errors replace the handwritten ones and come last,
// with no detail.
func declarativeBindingErrors(errs field.ErrorList, b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) field.ErrorList {
	policyName := field.NewPath("spec", "policyName")
	actions := field.NewPath("spec", "validationActions")
	var out field.ErrorList
	for _, e := range errs {
		if e.Type == field.ErrorTypeRequired && (e.Field == policyName.String() || e.Field == actions.String()) {
			continue
		}
		out = append(out, e)
	}
	if b.Spec.PolicyName == "" {
		out = append(out, field.Required(policyName, ""))
	}
	if len(b.Spec.ValidationActions) == 0 {
		out = append(out, field.Required(actions, ""))
	}
	return out
}
