// Package handlers holds what of kube's REST handlers package clients can see by name: the Go type
// kube decodes a JSON patch's operations into appears in the errors a malformed patch gets ("json:
// cannot unmarshal object into Go value of type []handlers.jsonPatchOp"), so the package and the
// type carry kube's names.
package handlers

import sigsjson "sigs.k8s.io/json"

// jsonPatchOp is one RFC 6902 operation, as kube's patch handler declares it.
type jsonPatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	From  string `json:"from"`
	Value any    `json:"value"`
}

// UnmarshalJSONPatchStrict decodes a JSON patch's operations only to find their unknown and
// duplicate fields, as kube does under fieldValidation Strict and Warn: it returns those, or the
// decoding error in kube's words.
func UnmarshalJSONPatchStrict(patch []byte) (strictErrors []error, err error) {
	var ops []jsonPatchOp
	return sigsjson.UnmarshalStrict(patch, &ops)
}
