package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	sigsjson "sigs.k8s.io/json"

	"github.com/apictl/apictl/pkg/routes"
	"github.com/apictl/apictl/pkg/storage"
)

// The scale subresource of a custom resource reads and writes an autoscaling/v1 Scale made from the
// paths its CRD declares; a write changes only the spec replicas path of the object.

// storedCustom decodes a stored custom resource with its resourceVersion.
func (s *store) storedCustom(kv storage.KeyValue) (*unstructured.Unstructured, error) {
	if s.form.converts(kv.Value) {
		obj, err := s.form.decode(kv) // at the route's version, pruned to its schema
		if err != nil {
			return nil, err
		}
		return obj.(*unstructured.Unstructured), nil
	}
	u, err := s.crv.DecodeStored(kv.Value)
	if err != nil {
		return nil, err
	}
	u.SetResourceVersion(strconv.FormatInt(kv.ModRevision, 10))
	return u, nil
}

func (s *scope) getScale(w http.ResponseWriter, r *http.Request, p routes.Params) {
	out, kv, ok := s.getStored(w, r, p, 0)
	if !ok {
		return
	}
	obj, err := s.store.storedCustom(kv)
	if err == nil {
		var scale *autoscalingv1.Scale
		if scale, err = s.crv.ScaleFromObject(obj); err == nil {
			s.writeScale(w, r, out, http.StatusOK, scale)
			return
		}
	}
	writeError(w, r, apiError(err, s.gr, p.Name))
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
	scale, warnings, err := s.decodeScale(req.body, req.opts.fieldValidation)
	if err != nil {
		writeError(w, r, err)
		return
	}
	result, err := s.store.applyScale(r.Context(), p, req.opts, func(*autoscalingv1.Scale) (*autoscalingv1.Scale, error) { return scale, nil })
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

// applyScale applies the Scale that next makes from the current one to the object, under the rules of
// an update of the object, and returns the Scale of the stored result.
func (s *store) applyScale(ctx context.Context, p routes.Params, opts *writeOptions, next func(current *autoscalingv1.Scale) (*autoscalingv1.Scale, error)) (*autoscalingv1.Scale, error) {
	key := s.key(p.Namespace, p.Name)
	var expected int64
	update := func(current storage.KeyValue) ([]byte, error) {
		old, err := s.storedCustom(current)
		if err != nil {
			return nil, err
		}
		base, err := s.crv.ScaleForUpdate(old)
		if err != nil {
			return nil, err
		}
		scale, err := next(base)
		if err != nil {
			return nil, err
		}
		if expected, err = parseResourceVersion(scale.ResourceVersion); err != nil {
			return nil, err
		}
		if expected != 0 && expected != current.ModRevision {
			return nil, &storage.StorageError{Code: storage.Conflict, Key: key}
		}
		updated, err := s.crv.ApplyScale(old, scale)
		if err != nil {
			return nil, err
		}
		if err := s.strategy.PrepareForUpdate(updated, old); err != nil {
			return nil, err
		}
		if err := s.crv.Invalid(updated.GetName(), s.crv.ValidateUpdate(ctx, updated, old)); err != nil {
			return nil, err
		}
		return s.encode(updated)
	}
	kv, err := s.guaranteedUpdate(ctx, key, opts.dryRun, update, storage.UpdateOptions{})
	if err != nil {
		return nil, apiError(err, s.gr, p.Name)
	}
	obj, err := s.storedCustom(kv)
	if err != nil {
		return nil, apiError(err, s.gr, p.Name)
	}
	scale, err := s.crv.ScaleFromObject(obj)
	if err != nil {
		return nil, apiError(err, s.gr, p.Name)
	}
	return scale, nil
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
