package validation

import (
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ConditionTypes checks a status's conditions as ValidateFlowSchemaStatus and
// ValidatePriorityLevelConfigurationStatus do (pkg/apis/flowcontrol/validation/validation.go): each
// has a type, and no type comes twice. typeOf reads a condition's type; fld is the status's path.
func ConditionTypes[C any, T ~string](conditions []C, typeOf func(C) T, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[T]()
	for i, c := range conditions {
		p := fld.Child("conditions").Index(i)
		t := typeOf(c)
		if seen.Has(t) {
			errs = append(errs, field.Duplicate(p.Child("type"), t))
		}
		seen.Insert(t)
		if t == "" {
			errs = append(errs, field.Required(p.Child("type"), ""))
		}
	}
	return errs
}
