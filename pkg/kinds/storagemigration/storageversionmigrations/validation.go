// Ported from k8s.io/kubernetes v1.37.2 pkg/apis/storagemigration/validation/validation.go: the
// rules of a migration's spec and status. The metadata checks are the registry's generic ones.

package storageversionmigrations

import (
	"fmt"
	"strings"

	svmv1 "k8s.io/api/storagemigration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// internalSpec is kube's internal StorageVersionMigrationSpec, whose field has no json tag: an
// immutable-spec error prints the spec as kube's JSON of that type prints it.
type internalSpec struct {
	Resource metav1.GroupResource
}

// validateSpec is ValidateStorageVersionMigration without the metadata: the resource as
// APIServices name theirs, a DNS-1035 label in a DNS-1123 subdomain group.
func validateSpec(svm *svmv1.StorageVersionMigration) field.ErrorList {
	var errs field.ErrorList
	res := field.NewPath("spec", "resource")
	if svm.Spec.Resource.Resource == "" {
		errs = append(errs, field.Required(res.Child("resource"), "resource is required to be set"))
	} else if msgs := utilvalidation.IsDNS1035Label(svm.Spec.Resource.Resource); len(msgs) > 0 {
		errs = append(errs, field.Invalid(res.Child("resource"), svm.Spec.Resource.Resource, strings.Join(msgs, ",")))
	}
	if svm.Spec.Resource.Group != "" {
		if msgs := utilvalidation.IsDNS1123Subdomain(svm.Spec.Resource.Group); len(msgs) > 0 {
			errs = append(errs, field.Invalid(res.Child("group"), svm.Spec.Resource.Group, strings.Join(msgs, ",")))
		}
	}
	return errs
}

// validateUpdate is ValidateStorageVersionMigrationUpdate: the spec never changes.
func validateUpdate(svm, old *svmv1.StorageVersionMigration) field.ErrorList {
	errs := validateSpec(svm)
	return append(errs, apimachineryvalidation.ValidateImmutableField(
		internalSpec(svm.Spec), internalSpec(old.Spec), field.NewPath("spec"))...)
}

// validateStatusUpdate is ValidateStorageVersionMigrationStatusUpdate: a well-formed resourceVersion
// that, once set, stays; valid conditions; Succeeded and Failed never both true, and neither taken
// back once true.
func validateStatusUpdate(svm, old *svmv1.StorageVersionMigration) field.ErrorList {
	var errs field.ErrorList
	status := field.NewPath("status")
	if rv := svm.Status.ResourceVersion; rv != "" {
		// kube compares the version with itself: only a malformed one fails.
		if cmp, err := resourceversion.CompareResourceVersion(rv, rv); err != nil || cmp != 0 {
			if err == nil {
				err = fmt.Errorf("unable to compare resource versions, %s is not equal to %s", rv, rv)
			}
			errs = append(errs, field.Invalid(status.Child("resourceVersion"), rv, err.Error()))
		}
	}
	errs = append(errs, metav1validation.ValidateConditions(svm.Status.Conditions, status.Child("conditions"))...)
	if old.Status.ResourceVersion != "" && old.Status.ResourceVersion != svm.Status.ResourceVersion {
		errs = append(errs, field.Invalid(status.Child("resourceVersion"), svm.Status.ResourceVersion, "field is immutable"))
	}
	conditions := status.Child("conditions")
	if isTrue(svm, svmv1.MigrationSucceeded) && isTrue(svm, svmv1.MigrationFailed) {
		errs = append(errs, field.Invalid(conditions, svm.Status.Conditions, "Both success and failed conditions cannot be true at the same time"))
	}
	if isTrue(old, svmv1.MigrationSucceeded) && !isTrue(svm, svmv1.MigrationSucceeded) {
		errs = append(errs, field.Invalid(conditions, svm.Status.Conditions, "Success condition cannot be set to false once it is true"))
	}
	if isTrue(old, svmv1.MigrationFailed) && !isTrue(svm, svmv1.MigrationFailed) {
		errs = append(errs, field.Invalid(conditions, svm.Status.Conditions, "Failed condition cannot be set to false once it is true"))
	}
	return errs
}

func isTrue(svm *svmv1.StorageVersionMigration, t svmv1.MigrationConditionType) bool {
	return meta.IsStatusConditionTrue(svm.Status.Conditions, string(t))
}
