package patch

import (
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/mergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	sigsjson "sigs.k8s.io/json"
)

// strategicPatch applies a strategic merge patch: lists merge by the merge keys and patch
// strategies of the kind's Go type (containers by name, finalizers as a set), and $patch,
// $retainKeys, $setElementOrder and $deleteFromPrimitiveList directives apply.
func (tg *target) strategicPatch(current runtime.Object, req Request, strict *strictness) (runtime.Object, error) {
	original, err := runtime.DefaultUnstructuredConverter.ToUnstructured(tg.forReading(current))
	if err != nil {
		return nil, fmt.Errorf("converting the current object: %w", err)
	}
	var patch map[string]any
	if strict.enabled() {
		found, err := sigsjson.UnmarshalStrict(req.Patch, &patch)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		strict.add(found...)
	} else if err := sigsjson.UnmarshalCaseSensitivePreserveInts(req.Patch, &patch); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	strict.quote(fmt.Sprintf("%+v", patch))
	patched, err := strategicpatch.StrategicMergeMapPatchUsingLookupPatchMeta(original, patch, tg.strategic)
	if err != nil {
		return nil, strategicError(err)
	}
	obj := tg.newObject()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(patched, obj, strict.enabled()); err != nil {
		found, ok := runtime.AsStrictDecodingError(err)
		if !ok {
			return nil, undecodable(fmt.Sprintf("%+v", patch), err)
		}
		strict.add(found.Errors()...)
	}
	if err := tg.checkKind(obj); err != nil {
		return nil, err
	}
	tg.Default(obj) // as kube's decoder defaults the patched object
	return obj, nil
}

// strategicError gives a strategic merge patch failure kube's status (interpretStrategicMergePatchError):
// 400 for a malformed patch, 422 for one the object's structure cannot take, and anything else (an
// unknown $patch directive, a map patched into a field the type does not have) as kube's handlers
// pass on an error that is not a Status: a 500 without a reason, whose message is the error's.
func strategicError(err error) error {
	for _, bad := range []error{mergepatch.ErrBadJSONDoc, mergepatch.ErrBadPatchFormatForPrimitiveList,
		mergepatch.ErrBadPatchFormatForRetainKeys, mergepatch.ErrBadPatchFormatForSetElementOrderList,
		mergepatch.ErrUnsupportedStrategicMergePatchFormat} {
		if errors.Is(err, bad) {
			return apierrors.NewBadRequest(err.Error())
		}
	}
	if errors.Is(err, mergepatch.ErrNoListOfLists) || errors.Is(err, mergepatch.ErrPatchContentNotMatchRetainKeys) {
		return patchRejected(err)
	}
	return unconverted(err)
}
