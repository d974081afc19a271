package handlers

import (
	"encoding/json"
	"fmt"
	"net/http"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	sigsjson "sigs.k8s.io/json"

	"github.com/apictl/apictl/pkg/routes"
	"github.com/apictl/apictl/pkg/serve/store"
)

// The scale subresource of a custom resource reads and writes an autoscaling/v1 Scale made from the
// paths its CRD declares; a write changes only the spec replicas path of the object.

func (s *scope) getScale(w http.ResponseWriter, r *http.Request, p routes.Params) {
	out, kv, ok := s.getStored(w, r, p, 0)
	if !ok {
		return
	}
	obj, err := s.store.StoredCustom(kv)
	if err == nil {
		var scale *autoscalingv1.Scale
		if scale, err = s.Crv.ScaleFromObject(obj); err == nil {
			s.writeScale(w, r, out, http.StatusOK, scale)
			return
		}
	}
	writeError(w, r, store.APIError(err, s.GR, p.Name))
}

func (s *scope) updateScale(w http.ResponseWriter, r *http.Request, p routes.Params) {
	req, ok := s.readWrite(w, r, "UpdateOptions", p.Name)
	if !ok {
		return
	}
	if req.bodyFormat == formatProtobuf {
		writeError(w, r, unsupportedMediaType(mediaJSON, mediaYAML))
		return
	}
	scale, warnings, err := s.decodeScale(req.body, req.opts.FieldValidation)
	if err != nil {
		writeError(w, r, err)
		return
	}
	result, err := s.store.ApplyScale(r.Context(), p, req.opts, func(*autoscalingv1.Scale) (*autoscalingv1.Scale, error) { return scale, nil })
	if err != nil {
		writeError(w, r, err)
		return
	}
	addWarnings(w, warnings)
	s.writeScale(w, r, req.out, http.StatusOK, result)
}

// decodeScale reads an autoscaling/v1 Scale, with fieldValidation for unknown fields.
func (s *scope) decodeScale(body []byte, validation string) (*autoscalingv1.Scale, []string, error) {
	var tm typeMeta
	if err := json.Unmarshal(body, &tm); err != nil {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("couldn't get version/kind; json parse error: %v", err))
	}
	if err := s.checkTypeMeta(tm); err != nil {
		return nil, nil, err
	}
	scale := &autoscalingv1.Scale{}
	strict, err := sigsjson.UnmarshalStrict(body, scale)
	if err != nil {
		return nil, nil, s.cannotHandle(err)
	}
	warnings, err := s.strictErrors(strict, validation)
	return scale, warnings, err
}

func (s *scope) writeScale(w http.ResponseWriter, r *http.Request, out output, code int, scale *autoscalingv1.Scale) {
	scale.APIVersion, scale.Kind = autoscalingv1.SchemeGroupVersion.String(), "Scale"
	body, err := json.Marshal(scale)
	if err != nil {
		writeError(w, r, apierrors.NewInternalError(err))
		return
	}
	writeJSON(w, r, code, out.format, body)
}
