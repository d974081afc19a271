// Ported from k8s.io/kubernetes v1.37.2
// staging/src/k8s.io/apiextensions-apiserver/pkg/registry/customresourcedefinition/strategy.go (the
// strategy and the status strategy, without their warnings; validation is the library's own). The
// package itself is not imported: it brings kube's generic registry store and etcd3 storage along.

package customresourcedefinitions

import (
	"context"
	"fmt"
	"slices"

	apiextensionshelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// strategy is kube's for CustomResourceDefinitions (apiextensions-apiserver's
// pkg/registry/customresourcedefinition). kube runs its strategy and validation on the internal
// type, so this does too: each step converts the v1 object to the internal one with apiextensions'
// own conversions, applies kube's rule, and converts back, which also normalises the object as
// kube's storage round trip does.
//
// The feature gates that strategy consults (CRDValidationRatcheting, CustomResourceFieldSelectors,
// CRDObservedGenerationTracking) are all on in v1.37, so its dropDisabledFields drops nothing and
// has no counterpart here.
type strategy struct {
	// scheme holds the internal and v1 types of apiextensions.k8s.io, their conversions and v1's
	// defaults; it is only read after newStrategy.
	scheme *runtime.Scheme
}

func newStrategy() strategy {
	scheme := runtime.NewScheme()
	utilruntime.Must(apiextensions.AddToScheme(scheme))
	utilruntime.Must(apiextensionsv1.AddToScheme(scheme))
	return strategy{scheme: scheme}
}

// ValidatesMeta: the CRD's validation checks its metadata itself (the name must be <plural>.<group>).
func (strategy) ValidatesMeta() {}

// Default applies v1's defaults (conversion strategy None, singular and listKind from the kind,
// the storage version in status.storedVersions, webhook service port 443) as kube's decoder does.
func (c strategy) Default(obj runtime.Object) { c.scheme.Default(obj) }

// internal converts a v1 CRD to apiextensions' internal type.
func (c strategy) internal(obj runtime.Object) (*apiextensions.CustomResourceDefinition, error) {
	out := &apiextensions.CustomResourceDefinition{}
	if err := c.scheme.Convert(obj, out, nil); err != nil {
		return nil, fmt.Errorf("converting the CustomResourceDefinition to the internal version: %w", err)
	}
	return out, nil
}

// toV1 replaces obj, a v1 CRD, with in converted back to v1.
func (c strategy) toV1(in *apiextensions.CustomResourceDefinition, obj runtime.Object) error {
	out := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.scheme.Convert(in, out, nil); err != nil {
		return fmt.Errorf("converting the CustomResourceDefinition to v1: %w", err)
	}
	out.TypeMeta = obj.(*apiextensionsv1.CustomResourceDefinition).TypeMeta
	*obj.(*apiextensionsv1.CustomResourceDefinition) = *out
	return nil
}

// PrepareForCreate resets status, starts generation at 1 and records the storage version as stored.
// A body the conversion cannot read is left alone; Validate reports it.
//
// Defaults are applied again first: a server-side apply or a patch builds its object without the
// decoder, and kube's field manager and patch decoding default what they build. Defaulting twice
// changes nothing.
func (c strategy) PrepareForCreate(obj runtime.Object) {
	c.Default(obj)
	crd, err := c.internal(obj)
	if err != nil {
		return
	}
	crd.Status = apiextensions.CustomResourceDefinitionStatus{}
	crd.Generation = 1
	recordStorageVersion(crd)
	_ = c.toV1(crd, obj)
}

// PrepareForUpdate keeps status from the stored object and moves generation on when spec changed.
// Defaults are applied again first, as in PrepareForCreate.
func (c strategy) PrepareForUpdate(obj, old runtime.Object) {
	c.Default(obj)
	crd, err := c.internal(obj)
	if err != nil {
		return
	}
	oldCRD, err := c.internal(old)
	if err != nil {
		return
	}
	crd.Status = oldCRD.Status
	if !apiequality.Semantic.DeepEqual(oldCRD.Spec, crd.Spec) {
		crd.Generation = oldCRD.Generation + 1
	}
	recordStorageVersion(crd)
	_ = c.toV1(crd, obj)
}

// recordStorageVersion adds the storage version to status.storedVersions, as kube's strategy does
// on every write of the main resource.
func recordStorageVersion(crd *apiextensions.CustomResourceDefinition) {
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			if !apiextensions.IsStoredVersion(crd, v.Name) {
				crd.Status.StoredVersions = append(crd.Status.StoredVersions, v.Name)
			}
			break
		}
	}
}

// kinds.Strategy carries no context: kube's CRD validation takes one for declarative
// metadata validation and CEL cost estimation, which are CPU work that nothing cancels mid-way.

// Validate is kube's ValidateCustomResourceDefinition: metadata (the name must be
// <plural>.<group>), names, versions, schemas (structural, pruned defaults, CEL rules within their
// cost budget), subresources, conversion, stored versions and API approval.
func (c strategy) Validate(obj runtime.Object) field.ErrorList {
	crd, err := c.internal(obj)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	return crdvalidation.ValidateCustomResourceDefinition(context.Background(), crd)
}

// ValidateUpdate is kube's ValidateCustomResourceDefinitionUpdate: scope, and once Established the
// names, cannot change; stricter rules apply unless the stored object already breaks them.
func (c strategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return c.validatePair(obj, old, crdvalidation.ValidateCustomResourceDefinitionUpdate)
}

// validatePair runs an update validation of kube's on the internal forms of obj and old.
func (c strategy) validatePair(obj, old runtime.Object, validate func(context.Context, *apiextensions.CustomResourceDefinition, *apiextensions.CustomResourceDefinition) field.ErrorList) field.ErrorList {
	crd, err := c.internal(obj)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	oldCRD, err := c.internal(old)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	return validate(context.Background(), crd, oldCRD)
}

// ValidateStatusUpdate is kube's ValidateUpdateCustomResourceDefinitionStatus, after the generic
// metadata checks kube's store runs on every update.
func (c strategy) ValidateStatusUpdate(obj, old runtime.Object) field.ErrorList {
	return c.validatePair(obj, old, crdvalidation.ValidateUpdateCustomResourceDefinitionStatus)
}

// PrepareForStatusUpdate keeps the stored spec and takes everything else from the request, metadata included:
// kube's CRD status strategy resets no metadata (kubernetes/kubernetes#137681), so labels and
// annotations written through /status stick. The server-owned metadata fields are kept as on every
// update.
func (c strategy) PrepareForStatusUpdate(obj, old runtime.Object) runtime.Object {
	out := obj.(*apiextensionsv1.CustomResourceDefinition).DeepCopy()
	oldCRD := old.(*apiextensionsv1.CustomResourceDefinition)
	out.Spec = *oldCRD.Spec.DeepCopy()
	return out
}

// MarkOnDelete is kube's CRD storage at a CRD's first delete, besides setting its deletionTimestamp
// (which, as in kube, comes with no grace period): the cleanup finalizer, which the CRD controller
// removes once every instance is gone, and the Terminating condition. Later deletes are the generic
// store's.
func (strategy) MarkOnDelete(obj runtime.Object, _ *metav1.DeleteOptions) (applies, changed bool) {
	crd := obj.(*apiextensionsv1.CustomResourceDefinition)
	if crd.DeletionTimestamp != nil {
		return false, false
	}
	if !slices.Contains(crd.Finalizers, apiextensionsv1.CustomResourceCleanupFinalizer) {
		crd.Finalizers = append(crd.Finalizers, apiextensionsv1.CustomResourceCleanupFinalizer)
	}
	apiextensionshelpers.SetCRDCondition(crd, apiextensionsv1.CustomResourceDefinitionCondition{
		Type:    apiextensionsv1.Terminating,
		Status:  apiextensionsv1.ConditionTrue,
		Reason:  "InstanceDeletionPending",
		Message: "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
	})
	return true, true
}
