package crschema

import (
	"fmt"
	"math"
	"strings"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// unsetReplicas marks a Scale built from an object without spec replicas, as kube does: a patch that
// does not set spec.replicas then fails instead of writing 0.
const unsetReplicas = math.MinInt32

// scalePaths are the scale subresource's JSONPaths of one version, as declared (.spec.replicas) and
// split into fields, plus what managed fields need: the spec replicas path of every version of the CRD.
type scalePaths struct {
	specPath, statusPath, selectorPath string
	spec, status, selector             []string

	gv       schema.GroupVersion
	mappings managedfields.ResourcePathMappings
}

func newScalePaths(crd *apiextensionsv1.CustomResourceDefinition, gv schema.GroupVersion, sc *apiextensionsv1.CustomResourceSubresourceScale, path *field.Path) (*scalePaths, field.ErrorList) {
	var errs field.ErrorList
	split := func(p *field.Path, jsonPath string) []string {
		fields := strings.Split(strings.TrimPrefix(jsonPath, "."), ".")
		if !strings.HasPrefix(jsonPath, ".") || strings.ContainsAny(jsonPath, "[]*@$") || fieldsHaveEmpty(fields) {
			errs = append(errs, field.Invalid(p, jsonPath, "must be a simple JSON path of field names, like .spec.replicas"))
		}
		return fields
	}
	sp := &scalePaths{
		specPath:   sc.SpecReplicasPath,
		statusPath: sc.StatusReplicasPath,
		spec:       split(path.Child("specReplicasPath"), sc.SpecReplicasPath),
		status:     split(path.Child("statusReplicasPath"), sc.StatusReplicasPath),
		gv:         gv,
		mappings:   managedfields.ResourcePathMappings{},
	}
	if sc.LabelSelectorPath != nil && *sc.LabelSelectorPath != "" {
		sp.selectorPath = *sc.LabelSelectorPath
		sp.selector = split(path.Child("labelSelectorPath"), sp.selectorPath)
	}
	// Entries of managers that wrote through another version must survive a scale write, so every
	// version is mapped, to nil when it has no scale subresource.
	for _, ver := range crd.Spec.Versions {
		key := schema.GroupVersion{Group: crd.Spec.Group, Version: ver.Name}.String()
		sp.mappings[key] = nil
		if s := ver.Subresources; s != nil && s.Scale != nil {
			var fp fieldpath.Path
			for _, name := range strings.Split(strings.TrimPrefix(s.Scale.SpecReplicasPath, "."), ".") {
				fp = append(fp, fieldpath.PathElement{FieldName: &name})
			}
			sp.mappings[key] = fp
		}
	}
	return sp, errs
}

func fieldsHaveEmpty(fields []string) bool {
	for _, f := range fields {
		if f == "" {
			return true
		}
	}
	return false
}

// ScaleFromObject is the autoscaling/v1 Scale a GET of the scale subresource returns: name, namespace,
// uid, resourceVersion and creationTimestamp of obj, spec.replicas from specReplicasPath, status.replicas
// from statusReplicasPath (0 when absent) and status.selector from labelSelectorPath. An object without
// spec replicas gives kube's 500 `the spec replicas field ".spec.replicas" does not exist` as a
// *StatusError; a value of the wrong type gives a plain error (a 500 as well).
func (v *Validator) ScaleFromObject(obj *unstructured.Unstructured) (*autoscalingv1.Scale, error) {
	scale, found, err := v.scaleOf(obj)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, apierrors.NewInternalError(fmt.Errorf("the spec replicas field %q does not exist", v.scale.specPath))
	}
	return scale, nil
}

// ScaleForUpdate is the Scale a PUT or PATCH of the scale subresource starts from: ScaleFromObject plus
// the managed fields of obj that own the spec replicas path, moved to Scale's spec.replicas. When obj
// has no spec replicas, spec.replicas holds a marker that ApplyScale rejects unless the patch set it.
func (v *Validator) ScaleForUpdate(obj *unstructured.Unstructured) (*autoscalingv1.Scale, error) {
	scale, found, err := v.scaleOf(obj)
	if err != nil {
		return nil, err
	}
	if !found {
		scale.Spec.Replicas = unsetReplicas
	}
	scale.ManagedFields, err = managedfields.NewScaleHandler(obj.GetManagedFields(), v.scale.gv, v.scale.mappings).ToSubresource()
	if err != nil {
		return nil, fmt.Errorf("converting managed fields to the scale subresource: %w", err)
	}
	return scale, nil
}

// ApplyScale returns a copy of obj with the Scale's spec.replicas written to specReplicasPath, which is
// all a scale write changes. A resourceVersion on the Scale becomes the object's (the handler's
// precondition). Managed fields of the Scale (as ScaleForUpdate made them, after the handler's field
// management) are merged back into the object's; nil managed fields leave the object's as they are.
// Run ValidateUpdate on the result: a negative replicas count is kube's 422 there. A Scale whose
// spec.replicas was never set is kube's 400 `the spec replicas field ".spec.replicas" cannot be empty`.
func (v *Validator) ApplyScale(obj *unstructured.Unstructured, scale *autoscalingv1.Scale) (*unstructured.Unstructured, error) {
	sp, err := v.scalePaths()
	if err != nil {
		return nil, err
	}
	if scale.Spec.Replicas == unsetReplicas {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the spec replicas field %q cannot be empty", sp.specPath))
	}
	out := obj.DeepCopy()
	if err := unstructured.SetNestedField(out.Object, int64(scale.Spec.Replicas), sp.spec...); err != nil {
		return nil, fmt.Errorf("setting %s: %w", sp.specPath, err)
	}
	if scale.ResourceVersion != "" {
		out.SetResourceVersion(scale.ResourceVersion)
	}
	if scale.ManagedFields != nil {
		entries, err := managedfields.NewScaleHandler(obj.GetManagedFields(), sp.gv, sp.mappings).ToParent(scale.ManagedFields)
		if err != nil {
			return nil, fmt.Errorf("converting managed fields from the scale subresource: %w", err)
		}
		out.SetManagedFields(entries)
	}
	return out, nil
}

func (v *Validator) scalePaths() (*scalePaths, error) {
	if v.scale == nil {
		return nil, fmt.Errorf("%s has no scale subresource", v.gvk)
	}
	return v.scale, nil
}

// scaleOf builds obj's Scale and reports whether spec replicas were present.
func (v *Validator) scaleOf(obj *unstructured.Unstructured) (*autoscalingv1.Scale, bool, error) {
	sp, err := v.scalePaths()
	if err != nil {
		return nil, false, err
	}
	return sp.fromObject(obj)
}

// fromObject builds the Scale and reports whether spec replicas were present.
func (sp *scalePaths) fromObject(obj *unstructured.Unstructured) (*autoscalingv1.Scale, bool, error) {
	specReplicas, found, err := unstructured.NestedInt64(obj.Object, sp.spec...)
	if err != nil {
		return nil, false, err
	}
	statusReplicas, _, err := unstructured.NestedInt64(obj.Object, sp.status...)
	if err != nil {
		return nil, false, err
	}
	var selector string
	if sp.selector != nil {
		if selector, _, err = unstructured.NestedString(obj.Object, sp.selector...); err != nil {
			return nil, false, err
		}
	}
	return &autoscalingv1.Scale{
		TypeMeta: metav1.TypeMeta{APIVersion: "autoscaling/v1", Kind: "Scale"},
		ObjectMeta: metav1.ObjectMeta{
			Name:              obj.GetName(),
			Namespace:         obj.GetNamespace(),
			UID:               obj.GetUID(),
			ResourceVersion:   obj.GetResourceVersion(),
			CreationTimestamp: obj.GetCreationTimestamp(),
		},
		Spec:   autoscalingv1.ScaleSpec{Replicas: int32(specReplicas)},
		Status: autoscalingv1.ScaleStatus{Replicas: int32(statusReplicas), Selector: selector},
	}, found, nil
}
