// Package validation holds the parts of kube's validation that several kinds share, ported from
// k8s.io/kubernetes pkg/apis/core/validation/validation.go (the functions named on each).
// Ported from k8s.io/kubernetes v1.37.2.
package validation

import (
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// MaxDataSize is kube's limit on the data of a ConfigMap or Secret (core.MaxSecretSize).
const MaxDataSize = 1 * 1024 * 1024

// DataKey checks a ConfigMap's or Secret's key, as ValidateConfigMap and ValidateSecret do.
func DataKey(key string, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range utilvalidation.IsConfigMapKey(key) {
		errs = append(errs, field.Invalid(fld, key, msg))
	}
	return errs
}

// ImmutableData applies kube's rules for `immutable` ConfigMaps and Secrets (ValidateConfigMapUpdate,
// ValidateSecretUpdate): once set it cannot be unset, and the data cannot change. other names the
// second data field (binaryData) when the kind has one.
func ImmutableData(oldImmutable, newImmutable *bool, dataChanged, otherChanged bool, other string) field.ErrorList {
	if oldImmutable == nil || !*oldImmutable {
		return nil
	}
	var errs field.ErrorList
	if newImmutable == nil || !*newImmutable {
		errs = append(errs, field.Forbidden(field.NewPath("immutable"), "field is immutable when `immutable` is set"))
	}
	if dataChanged {
		errs = append(errs, field.Forbidden(field.NewPath("data"), "field is immutable when `immutable` is set"))
	}
	if otherChanged {
		errs = append(errs, field.Forbidden(field.NewPath(other), "field is immutable when `immutable` is set"))
	}
	return errs
}
