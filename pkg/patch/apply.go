package patch

import (
	"bytes"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	sigsjson "sigs.k8s.io/json"
)

// apply runs server-side apply: the applied configuration merges into current (or into an empty
// object, creating it) under the rules of the kind's schema, and the manager comes to own exactly
// the fields it applied. A field another manager owns with a different value is a conflict (409)
// unless force takes it over. kubectl's own manager ("kubectl") may also take the fields its
// client-side apply annotation shows it set, and keeps that annotation current.
func (tg *target) apply(own *ownership, current runtime.Object, req Request, strict *strictness) (runtime.Object, error) {
	applied := &unstructured.Unstructured{}
	isJSON, err := decodeApplied(req.Patch, &applied.Object)
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
	}
	if applied.Object == nil {
		applied.Object = map[string]any{}
	}
	if err := tg.checkApplied(own, applied); err != nil {
		return nil, err
	}
	live := current
	if live == nil {
		live = tg.newObject()
	}
	force := req.Options.Force != nil && *req.Options.Force
	obj, err := own.fields.Apply(live, applied, req.Options.FieldManager, force)
	if err != nil {
		return nil, err
	}
	// kube checks for duplicate fields after the apply, so an apply error comes first.
	if strict.enabled() && !(isJSON && uniqueJSONFields(req.Patch)) {
		if err := utilyaml.UnmarshalStrict(req.Patch, &map[string]any{}); err != nil {
			if strict.directive == metav1.FieldValidationStrict {
				return nil, apierrors.NewBadRequest(fmt.Sprintf("error strict decoding patch: %v", err))
			}
			strict.add(err)
		}
	}
	obj.GetObjectKind().SetGroupVersionKind(tg.gvk)
	return obj, nil
}

// checkApplied answers the apply configurations the field manager would turn into a 500 with a
// 400, keeping kube's messages: one of another kind or version, and one with fields the schema
// does not declare (kube still answers 500 there; a fix making it 400 is under review upstream).
// A configuration that sets managedFields is left to the field manager, which refuses it with a
// 400 of its own.
func (tg *target) checkApplied(own *ownership, applied *unstructured.Unstructured) error {
	gvk := applied.GroupVersionKind()
	if gvk != tg.gvk {
		return apierrors.NewBadRequest(fmt.Sprintf("invalid object type: %v", gvk))
	}
	if applied.GetManagedFields() != nil {
		return nil
	}
	if _, err := own.converter.ObjectToTyped(applied); err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("failed to create typed patch object (%s/%s; %v): %v",
			applied.GetNamespace(), applied.GetName(), gvk, err))
	}
	return nil
}

// decodeApplied decodes an apply configuration. kube reads it as YAML; kubectl and most clients
// send JSON, which decodes to the same values several times faster with a JSON decoder (integers
// as int64, other numbers as float64, as the YAML path gives them), so JSON goes that way and
// anything else, or JSON the decoder refuses, the YAML way. isJSON reports the JSON way.
func decodeApplied(body []byte, into *map[string]any) (isJSON bool, err error) {
	if trimmed := bytes.TrimLeft(body, " \t\r\n"); len(trimmed) > 0 && trimmed[0] == '{' {
		var m map[string]any
		if sigsjson.UnmarshalCaseSensitivePreserveInts(body, &m) == nil {
			*into = m
			return true, nil
		}
	}
	return false, utilyaml.Unmarshal(body, into)
}

// uniqueJSONFields reports whether a JSON body repeats no field. When it does, the YAML decoder
// checks it again, for kube's message.
func uniqueJSONFields(body []byte) bool {
	var m map[string]any
	found, err := sigsjson.UnmarshalStrict(body, &m, sigsjson.DisallowDuplicateFields)
	return err == nil && len(found) == 0
}
