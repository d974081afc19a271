package patch

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	sigsjson "sigs.k8s.io/json"

	"github.com/apictl/apictl/pkg/patch/internal/handlers"
)

// kube's limits on JSON patches.
const (
	// MaxJSONPatchOperations is the most operations one JSON patch may hold; more is a 413.
	MaxJSONPatchOperations = 10000
	// MaxJSONPatchCopyBytes bounds what the "copy" operations of one JSON patch may add, kube's
	// default JSONPatchMaxCopyBytes: twice etcd's 1.5 MiB request limit.
	MaxJSONPatchCopyBytes = 3 << 20
)

// limitJSONPatchCopies arms json-patch's copy limit. The library only has a process-wide setting,
// so this does what kube-apiserver does when it builds its server: set it once, atomically, and
// never loosen a stricter limit someone else set. Writing only when the value changes keeps later
// calls from racing with patches in flight.
func limitJSONPatchCopies() {
	for {
		existing := atomic.LoadInt64(&jsonpatch.AccumulatedCopySizeLimit)
		if existing > 0 && existing <= MaxJSONPatchCopyBytes {
			return
		}
		if atomic.CompareAndSwapInt64(&jsonpatch.AccumulatedCopySizeLimit, existing, MaxJSONPatchCopyBytes) {
			return
		}
	}
}

// jsonPatch applies a JSON patch or a JSON merge patch to the JSON of current.
func (tg *target) jsonPatch(current runtime.Object, req Request, strict *strictness) (runtime.Object, error) {
	currentJS, err := json.Marshal(tg.forReading(current))
	if err != nil {
		return nil, fmt.Errorf("encoding the current object: %w", err)
	}
	var patched []byte
	switch req.Type {
	case types.JSONPatchType:
		if strict.enabled() {
			found, err := handlers.UnmarshalJSONPatchStrict(req.Patch)
			if err != nil {
				return nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
			}
			for _, e := range found {
				strict.add(fmt.Errorf("json patch %w", e))
			}
		}
		ops, err := jsonpatch.DecodePatch(req.Patch)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		if len(ops) > MaxJSONPatchOperations {
			return nil, apierrors.NewRequestEntityTooLargeError(
				fmt.Sprintf("The allowed maximum operations in a JSON patch is %d, got %d", MaxJSONPatchOperations, len(ops)))
		}
		if i, err := rootOperationWithoutValue(ops); i >= 0 {
			// json-patch panics on this operation (kube-apiserver v1.37.2 resets the stream): it fails,
			// after the operations before it.
			if _, applyErr := ops[:i].Apply(currentJS); applyErr != nil {
				return nil, patchRejected(applyErr)
			}
			return nil, patchRejected(err)
		}
		if patched, err = ops.Apply(currentJS); err != nil {
			return nil, patchRejected(err)
		}
	case types.MergePatchType:
		if strict.enabled() {
			var fields map[string]any
			found, err := sigsjson.UnmarshalStrict(req.Patch, &fields)
			if err != nil {
				return nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
			}
			strict.add(found...)
		}
		if patched, err = jsonpatch.MergePatch(currentJS, req.Patch); err != nil {
			if errors.Is(err, jsonpatch.ErrBadJSONPatch) {
				return nil, apierrors.NewBadRequest(err.Error())
			}
			return nil, fmt.Errorf("applying the merge patch: %w", err)
		}
	}
	strict.quote(string(patched))
	obj, err := tg.decodePatched(patched, strict)
	if err != nil {
		return nil, err
	}
	tg.Default(obj) // as kube's decoder defaults the patched object
	return obj, nil
}

// rootOperationWithoutValue finds the first "test" or "replace" of the whole document ("path": "")
// that has no value, and returns its index and why it fails; -1 if there is none. Without a value,
// a test cannot hold and a replace has no object or array to put in place of the document.
func rootOperationWithoutValue(ops jsonpatch.Patch) (int, error) {
	for i, op := range ops {
		kind := op.Kind()
		if kind != "test" && kind != "replace" {
			continue
		}
		if path, err := op.Path(); err != nil || path != "" {
			continue
		}
		if _, ok := op["value"]; ok {
			continue
		}
		if kind == "test" {
			return i, fmt.Errorf("testing value %s failed: %w", "", jsonpatch.ErrTestFailed)
		}
		return i, fmt.Errorf("replace operation value must be object or array: %w", jsonpatch.ErrInvalid)
	}
	return -1, nil
}

// decodePatched turns the patched JSON back into an object of the kind. For Go types, fields the
// type does not have are reported per fieldValidation; for custom resources that is the schema's
// business, after the patch.
func (tg *target) decodePatched(js []byte, strict *strictness) (runtime.Object, error) {
	obj := tg.newObject()
	var err error
	if tg.typed() {
		if strict.enabled() {
			var found []error
			found, err = sigsjson.UnmarshalStrict(js, obj)
			strict.add(found...)
		} else {
			err = sigsjson.UnmarshalCaseSensitivePreserveInts(js, obj)
		}
	} else {
		u := obj.(*unstructured.Unstructured)
		u.Object = nil
		err = sigsjson.UnmarshalCaseSensitivePreserveInts(js, &u.Object)
		if err == nil && u.Object == nil {
			err = errors.New("the patched object is null")
		}
	}
	if err != nil {
		return nil, undecodable(string(js), err)
	}
	if err := tg.checkKind(obj); err != nil {
		return nil, err
	}
	return obj, nil
}

// checkKind requires a patched object to still be of the target's kind, with the messages kube's
// decoder gives for a body of the wrong version or kind, and fills them in if the patch removed
// them.
func (tg *target) checkKind(obj runtime.Object) error {
	gvk := obj.GetObjectKind().GroupVersionKind()
	switch {
	case gvk.Version != "" && gvk.GroupVersion() != tg.gvk.GroupVersion():
		return apierrors.NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s)",
			gvk.GroupVersion(), tg.gvk.GroupVersion()))
	case gvk.Kind != "" && gvk.Kind != tg.gvk.Kind:
		return apierrors.NewBadRequest(fmt.Sprintf("the kind in the data (%s) does not match the expected kind (%s)", gvk.Kind, tg.gvk.Kind))
	}
	obj.GetObjectKind().SetGroupVersionKind(tg.gvk)
	return nil
}
