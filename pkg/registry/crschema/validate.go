package crschema

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/operation"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// declarativeValidation is kube's DeclarativeValidationBeta gate, on by default since 1.36.
const declarativeValidation = true

// Validate checks a custom resource about to be created, as kube's custom resource strategy does, in
// kube's order: a wrong apiVersion or kind (`kind: Invalid value: "Gadget": must be Widget`), or else
// metadata (name or generateName a DNS subdomain, namespace present exactly when the resource is
// namespaced, labels, annotations, ...), the schema and the replicas and selector values the scale
// subresource reads; then embedded resources, list-type sets and maps, and last the CEL rules
// (x-kubernetes-validations) with self, unless an earlier error blocks them (see celErrors). Call it
// after PrepareForCreate and name generation; turn the result into a 422 with Invalid.
func (v *Validator) Validate(ctx context.Context, obj *unstructured.Unstructured) field.ErrorList {
	errs := v.validateTypeMeta(obj)
	if len(errs) == 0 {
		var meta *metav1.ObjectMeta
		if meta, errs = metadataOf(obj); len(errs) == 0 {
			errs = apivalidation.ValidateObjectMetaDeclaratively(ctx, operation.Create, meta, nil, v.namespaced, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"), declarativeValidation)
		}
		errs = append(errs, fieldErrors(nil, v.rootValidator.Validate(obj.Object))...)
		errs = append(errs, v.validateScaleSpec(obj)...)
		errs = append(errs, v.validateScaleStatus(obj)...)
	}
	errs = append(errs, validateEmbedded(ctx, nil, obj.Object, v.embedded)...)
	errs = append(errs, listtype.ValidateListSetsAndMaps(nil, v.structural, obj.Object)...)
	return append(errs, v.celErrors(ctx, errs, obj, nil)...)
}

// ValidateUpdate checks an update of the main resource against the stored object: metadata update
// rules (immutable name, namespace, uid, creationTimestamp, ...), then everything Validate checks, and
// CEL transition rules (those using oldSelf). Schema and rule errors in parts the update did not change
// are forgiven (ratcheting), and list-type errors are only reported if the old object had none.
func (v *Validator) ValidateUpdate(ctx context.Context, obj, old *unstructured.Unstructured) field.ErrorList {
	errs := v.validateTypeMeta(obj)
	if len(errs) == 0 {
		errs = v.validateMetaUpdate(ctx, obj, old)
		errs = append(errs, fieldErrors(nil, newRatchet(v.root, "", obj.Object, old.Object).Validate(obj.Object))...)
		errs = append(errs, v.validateScaleSpec(obj)...)
		errs = append(errs, v.validateScaleStatus(obj)...)
	}
	errs = append(errs, validateEmbedded(ctx, nil, obj.Object, v.embedded)...)
	errs = append(errs, v.listTypeErrors(obj, old)...)
	return append(errs, v.celErrors(ctx, errs, obj, old)...)
}

// ValidateStatusUpdate checks a write to the status subresource: metadata update rules, status against
// the status schema (ratcheted; paths start with status. while kube-openapi's messages name the field
// from status down, as kube's do), the status replicas and selector of the scale subresource, list
// types when the old object had no list-type errors, and the CEL rules of the whole object, ratcheted
// (kube runs them all, so a spec left as stored passes even if its rules now fail).
func (v *Validator) ValidateStatusUpdate(ctx context.Context, obj, old *unstructured.Unstructured) field.ErrorList {
	errs := v.validateTypeMeta(obj)
	if len(errs) == 0 {
		errs = v.validateMetaUpdate(ctx, obj, old)
		if status, ok := obj.Object["status"]; ok && v.statusSchema != nil {
			res := newRatchet(v.statusSchema, "", status, old.Object["status"]).Validate(status)
			errs = append(errs, fieldErrors(field.NewPath("status"), res)...)
		}
		errs = append(errs, v.validateScaleStatus(obj)...)
	}
	errs = append(errs, v.listTypeErrors(obj, old)...)
	return append(errs, v.celErrors(ctx, errs, obj, old)...)
}

// listTypeErrors returns the list-type errors of obj, or none if old has some too: as in kube, an
// object stored with broken list types stays writable. old is only walked when obj has errors.
func (v *Validator) listTypeErrors(obj, old *unstructured.Unstructured) field.ErrorList {
	errs := listtype.ValidateListSetsAndMaps(nil, v.structural, obj.Object)
	if len(errs) == 0 || len(listtype.ValidateListSetsAndMaps(nil, v.structural, old.Object)) > 0 {
		return nil
	}
	return errs
}

// Invalid is kube's 422 for errs: `Widget.example.com "w" is invalid: spec.size: ...`; nil without errors.
func (v *Validator) Invalid(name string, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(v.gvk.GroupKind(), name, errs)
}

// InvalidObject is Invalid for the body of a create or update, obj: kube's store names the Status
// after the kind the object says it is (its ObjectKinds), so a Gadget sent to widgets is `Gadget.example.com
// "w" is invalid: kind: Invalid value: "Gadget": must be Widget`.
func (v *Validator) InvalidObject(obj *unstructured.Unstructured, name string, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	gk := v.gvk.GroupKind()
	if gvk := obj.GroupVersionKind(); gvk.Kind != "" {
		gk = gvk.GroupKind()
	}
	return apierrors.NewInvalid(gk, name, errs)
}

func (v *Validator) validateTypeMeta(obj *unstructured.Unstructured) field.ErrorList {
	var errs field.ErrorList
	if kind := obj.GetKind(); kind != v.gvk.Kind {
		errs = append(errs, field.Invalid(field.NewPath("kind"), kind, "must be "+v.gvk.Kind))
	}
	if gv := v.gvk.Group + "/" + v.gvk.Version; obj.GetAPIVersion() != gv {
		errs = append(errs, field.Invalid(field.NewPath("apiVersion"), obj.GetAPIVersion(), "must be "+gv))
	}
	return errs
}

func (v *Validator) validateMetaUpdate(ctx context.Context, obj, old *unstructured.Unstructured) field.ErrorList {
	meta, errs := metadataOf(obj)
	if len(errs) > 0 {
		return errs
	}
	oldMeta, errs := metadataOf(old)
	if len(errs) > 0 {
		return errs
	}
	return apivalidation.ValidateObjectMetaDeclaratively(ctx, operation.Update, meta, oldMeta, v.namespaced, nil, field.NewPath("metadata"), declarativeValidation)
}

// metadataOf reads obj's metadata for validation.
func metadataOf(obj *unstructured.Unstructured) (*metav1.ObjectMeta, field.ErrorList) {
	raw := obj.Object["metadata"]
	if raw == nil {
		return &metav1.ObjectMeta{}, nil
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, field.ErrorList{field.Invalid(field.NewPath("metadata"), raw, fmt.Sprintf("expected map[string]interface{}, got %T", raw))}
	}
	meta := &metav1.ObjectMeta{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, meta); err != nil {
		return nil, field.ErrorList{field.Invalid(field.NewPath("metadata"), raw, err.Error())}
	}
	return meta, nil
}

// validateScaleSpec checks the value at specReplicasPath: an integer from 0 to 2^31-1. Field paths are
// the declared JSONPath (.spec.replicas), as in kube's messages.
func (v *Validator) validateScaleSpec(obj *unstructured.Unstructured) field.ErrorList {
	if v.scale == nil {
		return nil
	}
	return replicasErrors(obj, v.scale.specPath, v.scale.spec)
}

// validateScaleStatus checks the values at statusReplicasPath and labelSelectorPath (a string).
func (v *Validator) validateScaleStatus(obj *unstructured.Unstructured) field.ErrorList {
	if v.scale == nil {
		return nil
	}
	errs := replicasErrors(obj, v.scale.statusPath, v.scale.status)
	if v.scale.selector != nil {
		if sel, _, err := unstructured.NestedString(obj.Object, v.scale.selector...); err != nil {
			errs = append(errs, field.Invalid(field.NewPath(v.scale.selectorPath), sel, err.Error()))
		}
	}
	return errs
}

func replicasErrors(obj *unstructured.Unstructured, declared string, fields []string) field.ErrorList {
	n, _, err := unstructured.NestedInt64(obj.Object, fields...)
	p := field.NewPath(declared)
	switch {
	case err != nil:
		return field.ErrorList{field.Invalid(p, n, err.Error())}
	case n < 0:
		return field.ErrorList{field.Invalid(p, n, "should be a non-negative integer")}
	case n > math.MaxInt32:
		return field.ErrorList{field.Invalid(p, n, fmt.Sprintf("should be less than or equal to %v", math.MaxInt32))}
	}
	return nil
}

// validateEmbedded checks the embedded resources (x-kubernetes-embedded-resource) below x, following the
// schema's embedded-resource branches n, as kube does: apiVersion and kind are required strings (kind a
// CamelCase DNS label), and metadata is valid ObjectMeta whose name, if any, is a valid path segment.
// Errors are sorted by path.
func validateEmbedded(ctx context.Context, path *field.Path, x any, n *embeddedNode) field.ErrorList {
	var errs field.ErrorList
	var walk func(path *field.Path, x any, n *embeddedNode)
	walk = func(path *field.Path, x any, n *embeddedNode) {
		if n == nil {
			return
		}
		switch x := x.(type) {
		case map[string]any:
			if n.resource {
				errs = append(errs, validateEmbeddedResource(ctx, path, x)...)
			}
			for k, val := range x {
				if sub := n.child(k); sub != nil {
					if _, declared := n.properties[k]; declared {
						walk(path.Child(k), val, sub)
					} else {
						walk(path.Key(k), val, sub)
					}
				}
			}
		case []any:
			for i, val := range x {
				walk(path.Index(i), val, n.items)
			}
		}
	}
	walk(path, x, n)
	slices.SortStableFunc(errs, func(a, b *field.Error) int { return strings.Compare(a.Field, b.Field) })
	return errs
}

func validateEmbeddedResource(ctx context.Context, path *field.Path, x map[string]any) field.ErrorList {
	var errs field.ErrorList
	for _, k := range []string{"apiVersion", "kind"} {
		v, ok := x[k]
		if !ok {
			errs = append(errs, field.Required(path.Child(k), ""))
			continue
		}
		s, isString := v.(string)
		switch {
		case !isString:
			errs = append(errs, field.Invalid(path.Child(k), v, "must be a string"))
		case s == "":
			errs = append(errs, field.Invalid(path.Child(k), s, "must not be empty"))
		default:
			if msg := typeMetaProblem(k, s); msg != "" {
				errs = append(errs, field.Invalid(path.Child(k), s, msg))
			}
		}
	}
	if v, ok := x["metadata"]; ok {
		meta, _, _, err := objectMeta(x, path, coerceMode{})
		if err != nil {
			return append(errs, field.Invalid(path.Child("metadata"), v, err.Error()))
		}
		if meta.Name == "" {
			meta.Name = "fakename" // an embedded object need not be named; the rest must be valid
		}
		errs = append(errs, apivalidation.ValidateObjectMetaDeclaratively(ctx, operation.Create, meta, nil, meta.Namespace != "", pathSegment, path.Child("metadata"), declarativeValidation)...)
	}
	return errs
}

// typeMetaProblem says what is wrong with an embedded resource's apiVersion or kind, "" if nothing.
func typeMetaProblem(name, value string) string {
	if name == "apiVersion" {
		if _, err := schema.ParseGroupVersion(value); err != nil {
			return err.Error()
		}
		return ""
	}
	if msgs := validation.IsDNS1035Label(strings.ToLower(value)); len(msgs) > 0 {
		return "may have mixed case, but should otherwise match: " + strings.Join(msgs, ",")
	}
	return ""
}

// pathSegment is the name rule of embedded objects: any name that is a valid path segment.
func pathSegment(name string, prefix bool) []string {
	if prefix {
		return content.IsPathSegmentPrefix(name)
	}
	return content.IsPathSegmentName(name)
}
