package prioritylevelconfigurations

// Ported from k8s.io/kubernetes v1.37.2 pkg/apis/flowcontrol/validation/validation.go:
// ValidatePriorityLevelConfiguration and the functions it calls, on the v1 types (kube validates its
// internal types, which have the same fields; the field of the concurrency shares is named as v1 names
// it). The metadata and the name are checked by the generic rules before these run.

import (
	"fmt"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	flowcontrolv1beta3 "k8s.io/api/flowcontrol/v1beta3"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
	"k8s.io/apiserver/pkg/util/shufflesharding"

	"github.com/apictl/apictl/pkg/kinds/validation"
)

var (
	supportedTypes         = []string{string(flowcontrolv1.PriorityLevelEnablementExempt), string(flowcontrolv1.PriorityLevelEnablementLimited)}
	supportedLimitResponse = []string{string(flowcontrolv1.LimitResponseTypeQueue), string(flowcontrolv1.LimitResponseTypeReject)}
)

// maxQueues bounds a level's queues (10^7).
const maxQueues int32 = 10 * 1000 * 1000

func validate(pl *flowcontrolv1.PriorityLevelConfiguration) field.ErrorList {
	var errs field.ErrorList
	// The annotation is v1beta3's way to keep a zero of the shares through a round trip; it has no
	// business on a stored object.
	if _, ok := pl.Annotations[flowcontrolv1beta3.PriorityLevelPreserveZeroConcurrencySharesKey]; ok {
		errs = append(errs, field.Forbidden(field.NewPath("metadata").Child("annotations"),
			fmt.Sprintf("annotation '%s' is forbidden", flowcontrolv1beta3.PriorityLevelPreserveZeroConcurrencySharesKey)))
	}
	specPath := field.NewPath("spec")
	errs = append(errs, validateSpec(&pl.Spec, pl.Name, specPath)...)
	errs = append(errs, validateMandatory(pl, specPath)...)
	errs = append(errs, validateStatus(&pl.Status, field.NewPath("status"))...)
	// kube reports the errors its declarative validation covers (the union members and their type)
	// as that validation words them, without detail, after the hand-written ones.
	var out, declarative field.ErrorList
	for _, e := range errs {
		if e.CoveredByDeclarative {
			d := *e
			d.Detail, d.CoveredByDeclarative = "", false
			declarative = append(declarative, &d)
			continue
		}
		out = append(out, e)
	}
	return append(out, declarative...)
}

// validateMandatory is ValidateIfMandatoryPriorityLevelConfigurationObject: a mandatory level keeps
// its fixed spec, but for the exempt level's spec.exempt, which an admin may tune.
func validateMandatory(pl *flowcontrolv1.PriorityLevelConfiguration, fld *field.Path) field.ErrorList {
	var mand *flowcontrolv1.PriorityLevelConfiguration
	for _, m := range bootstrap.MandatoryPriorityLevelConfigurations {
		if m.Name == pl.Name {
			mand = m.DeepCopy()
			SetDefaults(mand)
		}
	}
	if mand == nil {
		return nil
	}
	if pl.Name == flowcontrolv1.PriorityLevelConfigurationNameExempt {
		have := pl.Spec.DeepCopy()
		have.Exempt = mand.Spec.Exempt
		if !apiequality.Semantic.DeepEqual(&mand.Spec, have) {
			return field.ErrorList{field.Invalid(fld, validation.InternalJSON(pl.Spec), fmt.Sprintf("spec of '%s' except the 'spec.exempt' field must equal the fixed value", pl.Name))}
		}
		return nil
	}
	if !apiequality.Semantic.DeepEqual(pl.Spec, mand.Spec) {
		return field.ErrorList{field.Invalid(fld, validation.InternalJSON(pl.Spec), fmt.Sprintf("spec of '%s' must equal the fixed value", pl.Name))}
	}
	return nil
}

func validateSpec(spec *flowcontrolv1.PriorityLevelConfigurationSpec, name string, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	if (name == flowcontrolv1.PriorityLevelConfigurationNameExempt) != (spec.Type == flowcontrolv1.PriorityLevelEnablementExempt) {
		errs = append(errs, field.Invalid(fld.Child("type"), spec.Type, "must be 'Exempt' if and only if `name` is 'exempt'"))
	}
	switch spec.Type {
	case flowcontrolv1.PriorityLevelEnablementExempt:
		if spec.Limited != nil {
			errs = append(errs, field.Forbidden(fld.Child("limited"), "must be nil if the type is not Limited").MarkCoveredByDeclarative())
		}
		if spec.Exempt != nil {
			errs = append(errs, validateExempt(spec.Exempt, fld.Child("exempt"))...)
		}
	case flowcontrolv1.PriorityLevelEnablementLimited:
		if spec.Exempt != nil {
			errs = append(errs, field.Forbidden(fld.Child("exempt"), "must be nil if the type is Limited").MarkCoveredByDeclarative())
		}
		if spec.Limited == nil {
			errs = append(errs, field.Required(fld.Child("limited"), "must not be empty when type is Limited").MarkCoveredByDeclarative())
		} else {
			errs = append(errs, validateLimited(spec.Limited, fld.Child("limited"))...)
		}
	case "":
		errs = append(errs, field.Required(fld.Child("type"), "").MarkCoveredByDeclarative())
	default:
		errs = append(errs, field.NotSupported(fld.Child("type"), spec.Type, supportedTypes))
	}
	return errs
}

func validateLimited(l *flowcontrolv1.LimitedPriorityLevelConfiguration, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	if l.NominalConcurrencyShares != nil && *l.NominalConcurrencyShares < 0 {
		errs = append(errs, field.Invalid(fld.Child("nominalConcurrencyShares"), *l.NominalConcurrencyShares, "must be a non-negative integer"))
	}
	errs = append(errs, validateLimitResponse(l.LimitResponse, fld.Child("limitResponse"))...)
	if p := l.LendablePercent; p != nil && (*p < 0 || *p > 100) {
		errs = append(errs, field.Invalid(fld.Child("lendablePercent"), *p, "must be between 0 and 100, inclusive"))
	}
	if p := l.BorrowingLimitPercent; p != nil && *p < 0 {
		errs = append(errs, field.Invalid(fld.Child("borrowingLimitPercent"), *p, "if specified, must be a non-negative integer"))
	}
	return errs
}

func validateExempt(e *flowcontrolv1.ExemptPriorityLevelConfiguration, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	if n := e.NominalConcurrencyShares; n != nil && *n < 0 {
		errs = append(errs, field.Invalid(fld.Child("nominalConcurrencyShares"), *n, "must be a non-negative integer"))
	}
	if p := e.LendablePercent; p != nil && (*p < 0 || *p > 100) {
		errs = append(errs, field.Invalid(fld.Child("lendablePercent"), *p, "must be between 0 and 100, inclusive"))
	}
	return errs
}

func validateLimitResponse(lr flowcontrolv1.LimitResponse, fld *field.Path) field.ErrorList {
	switch lr.Type {
	case flowcontrolv1.LimitResponseTypeReject:
		if lr.Queuing != nil {
			return field.ErrorList{field.Forbidden(fld.Child("queuing"), "must be nil if limited.limitResponse.type is not Limited").MarkCoveredByDeclarative()}
		}
	case flowcontrolv1.LimitResponseTypeQueue:
		if lr.Queuing == nil {
			return field.ErrorList{field.Required(fld.Child("queuing"), "must not be empty if limited.limitResponse.type is Limited").MarkCoveredByDeclarative()}
		}
		return validateQueuing(lr.Queuing, fld.Child("queuing"))
	case "":
		return field.ErrorList{field.Required(fld.Child("type"), "").MarkCoveredByDeclarative()}
	default:
		return field.ErrorList{field.NotSupported(fld.Child("type"), lr.Type, supportedLimitResponse)}
	}
	return nil
}

// validateQueuing is ValidatePriorityLevelQueuingConfiguration: positive numbers, and a hand that the
// shuffle sharding can deal from the deck.
func validateQueuing(q *flowcontrolv1.QueuingConfiguration, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	if q.QueueLengthLimit <= 0 {
		errs = append(errs, field.Invalid(fld.Child("queueLengthLimit"), q.QueueLengthLimit, "must be positive"))
	}
	if q.Queues <= 0 {
		errs = append(errs, field.Invalid(fld.Child("queues"), q.Queues, "must be positive"))
	} else if q.Queues > maxQueues {
		errs = append(errs, field.Invalid(fld.Child("queues"), q.Queues, fmt.Sprintf("must not be greater than %d", maxQueues)))
	}
	switch {
	case q.HandSize <= 0:
		errs = append(errs, field.Invalid(fld.Child("handSize"), q.HandSize, "must be positive"))
	case q.HandSize > q.Queues:
		errs = append(errs, field.Invalid(fld.Child("handSize"), q.HandSize, fmt.Sprintf("should not be greater than queues (%d)", q.Queues)))
	case shufflesharding.RequiredEntropyBits(int(q.Queues), int(q.HandSize)) > shufflesharding.MaxHashBits:
		errs = append(errs, field.Invalid(fld.Child("handSize"), q.HandSize,
			fmt.Sprintf("required entropy bits of deckSize %d and handSize %d should not be greater than %d", q.Queues, q.HandSize, shufflesharding.MaxHashBits)))
	}
	return errs
}

// validateStatus is ValidatePriorityLevelConfigurationStatus.
func validateStatus(status *flowcontrolv1.PriorityLevelConfigurationStatus, fld *field.Path) field.ErrorList {
	return validation.ConditionTypes(status.Conditions, func(c flowcontrolv1.PriorityLevelConfigurationCondition) flowcontrolv1.PriorityLevelConfigurationConditionType {
		return c.Type
	}, fld)
}
