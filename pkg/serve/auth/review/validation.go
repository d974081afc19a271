package review

import (
	"fmt"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The checks of kube's pkg/apis/authorization/validation, with its messages.

const exactlyOne = "exactly one of nonResourceAttributes or resourceAttributes must be specified"

// validateSpec checks a SubjectAccessReview's spec: one kind of attributes, and a user or a group.
func validateSpec(spec *authorizationv1.SubjectAccessReviewSpec) field.ErrorList {
	errs := validateAttributes(spec.ResourceAttributes, spec.NonResourceAttributes)
	if spec.User == "" && len(spec.Groups) == 0 {
		// Kube reports this after the attributes' union and before the selectors.
		errs = insertBefore(errs, field.Invalid(field.NewPath("spec", "user"), spec.User, "at least one of user or group must be specified"))
	}
	return errs
}

// validateAttributes checks that exactly one kind of attributes is given, and the selectors.
func validateAttributes(res *authorizationv1.ResourceAttributes, nonRes *authorizationv1.NonResourceAttributes) field.ErrorList {
	var errs field.ErrorList
	if (res != nil) == (nonRes != nil) {
		errs = append(errs, field.Invalid(field.NewPath("spec"), asInternal(nonRes), exactlyOne))
	}
	return append(errs, validateSelectors(res)...)
}

// internalNonResourceAttributes has the fields of kube's internal NonResourceAttributes, which has no
// JSON tags: kube's messages print the value with Go's field names ({"Path":"/x","Verb":"get"}).
type internalNonResourceAttributes struct {
	Path string
	Verb string
}

// asInternal is the value kube's validation reports for non-resource attributes.
func asInternal(a *authorizationv1.NonResourceAttributes) any {
	if a == nil {
		return nil
	}
	return internalNonResourceAttributes{Path: a.Path, Verb: a.Verb}
}

// insertBefore puts e after the union error, if any, and before the selector errors.
func insertBefore(errs field.ErrorList, e *field.Error) field.ErrorList {
	at := 0
	if len(errs) > 0 && errs[0].Field == "spec" {
		at = 1
	}
	out := make(field.ErrorList, 0, len(errs)+1)
	out = append(out, errs[:at]...)
	out = append(out, e)
	return append(out, errs[at:]...)
}

// validateSelectors checks the field and label selectors of resource attributes.
func validateSelectors(res *authorizationv1.ResourceAttributes) field.ErrorList {
	if res == nil {
		return nil
	}
	var errs field.ErrorList
	path := field.NewPath("spec.resourceAttributes")
	if s := res.FieldSelector; s != nil {
		p := path.Child("fieldSelector")
		errs = append(errs, selectorShape(p, s.RawSelector, len(s.Requirements))...)
		opts := metav1validation.FieldSelectorValidationOptions{AllowUnknownOperatorInRequirement: true}
		for i, r := range s.Requirements {
			errs = append(errs, metav1validation.ValidateFieldSelectorRequirement(r, opts, p.Child("requirements").Index(i))...)
		}
	}
	if s := res.LabelSelector; s != nil {
		p := path.Child("labelSelector")
		errs = append(errs, selectorShape(p, s.RawSelector, len(s.Requirements))...)
		opts := metav1validation.LabelSelectorValidationOptions{AllowUnknownOperatorInRequirement: true}
		for i, r := range s.Requirements {
			errs = append(errs, metav1validation.ValidateLabelSelectorRequirement(r, opts, p.Child("requirements").Index(i))...)
		}
	}
	return errs
}

// selectorShape requires exactly one of rawSelector and requirements.
func selectorShape(p *field.Path, raw string, requirements int) field.ErrorList {
	switch {
	case raw != "" && requirements > 0:
		return field.ErrorList{field.Invalid(p.Child("rawSelector"), raw, "may not specified at the same time as requirements")}
	case raw == "" && requirements == 0:
		return field.ErrorList{field.Required(p.Child("requirements"), fmt.Sprintf("when %s is specified, requirements or rawSelector is required", p))}
	}
	return nil
}

// metadataEmpty requires metadata to be empty but for managedFields, which the server sets, and the
// namespace when namespaced; the value reported is the metadata the client sent.
func metadataEmpty(meta metav1.ObjectMeta, namespaced bool, msg string) field.ErrorList {
	meta.ManagedFields = nil
	cmp := meta
	if namespaced {
		cmp.Namespace = ""
	}
	if equality.Semantic.DeepEqual(metav1.ObjectMeta{}, cmp) {
		return nil
	}
	return field.ErrorList{field.Invalid(field.NewPath("metadata"), meta, msg)}
}
