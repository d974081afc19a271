package crschema

import (
	"context"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/common"
)

// compileRules compiles the x-kubernetes-validations rules of a version's structural schema with
// kube's own validator and per-call cost limit, as kube's custom resource strategy does when it
// serves a CRD version. It is nil when the schema has no rules. Rules that do not compile are kept:
// they fail at run time with kube's "rule compile error" (a CRD loaded by apictl has passed
// ValidateRules, so that only happens for CRDs taken without that check).
func compileRules(s *structuralschema.Structural) *cel.Validator {
	return cel.NewValidator(s, true, celconfig.PerCallLimit)
}

// celErrors runs the rules on obj (and old, on updates: nil on create, so transition rules are
// skipped) once the errors found so far allow it, as kube does: rules are not run when errs holds a
// schema error that makes the object unfit for them (a wrong type, a missing required field, a value
// out of the enum, an over-long string or list); kube then adds one error saying so. The runtime cost
// budget is kube's per object; rule errors on values that the update left unchanged are forgiven
// (kube's CRD validation ratcheting, on and locked since 1.33). As in kube, the errors of sibling
// fields come in map order, which varies from call to call; those of one field come in schema order.
func (v *Validator) celErrors(ctx context.Context, errs field.ErrorList, obj, old *unstructured.Unstructured) field.ErrorList {
	if v.rules == nil {
		return nil
	}
	if blocked := blockingError(errs); blocked != nil {
		return field.ErrorList{blocked}
	}
	var opts []cel.Option
	var oldObject any
	if old != nil {
		oldObject = old.Object
		opts = append(opts, cel.WithRatcheting(common.NewCorrelatedObject(obj.Object, old.Object, &model.Structural{Structural: v.structural})))
	}
	celErrs, _ := v.rules.Validate(ctx, nil, v.structural, obj.Object, oldObject, celconfig.RuntimeCELCostBudget, opts...)
	return celErrs
}

// blockingError is kube's error for objects whose rules were not run, nil if errs does not block
// them: kube blocks on Unsupported value, Required value, Too long, Too many and type errors.
func blockingError(errs field.ErrorList) *field.Error {
	for _, err := range errs {
		switch err.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return field.Invalid(nil, nil, "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation")
		}
	}
	return nil
}
