package handlers

import (
	"encoding/json"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// patchDecoder returns how the patcher decodes the object a JSON or merge patch of a custom
// resource produced, before its field manager records the write: through the CRD's schema, as
// kube's decoder does, so unknown fields are pruned (reported per validation, the fieldValidation
// directive) and defaults applied. A patch that removes a defaulted field thus gets it back, owned
// by the patcher, as in kube. Built-in kinds need no second decoding: nil.
func (s *scope) patchDecoder(validation string) func(runtime.Object) (runtime.Object, []string, error) {
	if s.Crv == nil {
		return nil
	}
	return func(obj runtime.Object) (runtime.Object, []string, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return obj, nil, nil
		}
		patched, err := json.Marshal(u.Object)
		if err != nil {
			return nil, nil, apierrors.NewInternalError(err)
		}
		return s.Crv.DecodePatched(patched, nil, validation)
	}
}
