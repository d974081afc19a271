package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// The versions this webhook converts between, and the field each calls the size.
const (
	groupV1 = "example.com/v1"
	groupV2 = "example.com/v2"
	sizeV1  = "size"
	sizeV2  = "replicas"
)

// converter answers ConversionReview v1.
type converter struct {
	log io.Writer
}

func (c *converter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var review apiextensionsv1.ConversionReview
	if err := json.NewDecoder(io.LimitReader(r.Body, 16<<20)).Decode(&review); err != nil {
		http.Error(w, fmt.Sprintf("decoding the ConversionReview: %v", err), http.StatusBadRequest)
		return
	}
	if review.Request == nil {
		http.Error(w, "the ConversionReview has no request", http.StatusBadRequest)
		return
	}
	req := review.Request
	fmt.Fprintf(c.log, "review desired=%s objects=%d\n", req.DesiredAPIVersion, len(req.Objects))
	resp := &apiextensionsv1.ConversionResponse{UID: req.UID, Result: metav1.Status{Status: metav1.StatusSuccess}}
	for i, raw := range req.Objects {
		out, err := convert(raw.Raw, req.DesiredAPIVersion)
		if err != nil {
			resp.ConvertedObjects = nil
			resp.Result = metav1.Status{Status: metav1.StatusFailure, Message: fmt.Sprintf("object %d: %v", i, err)}
			break
		}
		resp.ConvertedObjects = append(resp.ConvertedObjects, runtime.RawExtension{Raw: out})
	}
	review.Request, review.Response = nil, resp
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(&review)
}

// convert returns one object at the desired version: spec.size (v1) becomes spec.replicas (v2) and
// back, everything else stays as it is.
func convert(raw []byte, desired string) ([]byte, error) {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(raw); err != nil {
		return nil, err
	}
	from := u.GetAPIVersion()
	var oldField, newField string
	switch {
	case from == desired:
		return raw, nil
	case from == groupV1 && desired == groupV2:
		oldField, newField = sizeV1, sizeV2
	case from == groupV2 && desired == groupV1:
		oldField, newField = sizeV2, sizeV1
	default:
		return nil, fmt.Errorf("cannot convert %s to %s", from, desired)
	}
	if spec, ok := u.Object["spec"].(map[string]any); ok {
		if v, ok := spec[oldField]; ok {
			delete(spec, oldField)
			spec[newField] = v
		}
	}
	u.SetAPIVersion(desired)
	return u.MarshalJSON()
}
