package store

import (
	"context"
	"strconv"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apictl/apictl/pkg/routes"
	"github.com/apictl/apictl/pkg/storage"
)

// StoredCustom decodes a stored custom resource with its resourceVersion.
func (s *Store) StoredCustom(kv storage.KeyValue) (*unstructured.Unstructured, error) {
	if s.Form.Converts(kv.Value) {
		obj, err := s.Form.Decode(kv) // at the route's version, pruned to its schema
		if err != nil {
			return nil, err
		}
		return obj.(*unstructured.Unstructured), nil
	}
	u, err := s.Crv.DecodeStored(kv.Value)
	if err != nil {
		return nil, err
	}
	u.SetResourceVersion(strconv.FormatInt(kv.ModRevision, 10))
	return u, nil
}

// ApplyScale applies the Scale that next makes from the current one to the object, under the rules of
// an update of the object, and returns the Scale of the stored result.
func (s *Store) ApplyScale(ctx context.Context, p routes.Params, opts *WriteOptions, next func(current *autoscalingv1.Scale) (*autoscalingv1.Scale, error)) (*autoscalingv1.Scale, error) {
	key := s.Key(p.Namespace, p.Name)
	var expected int64
	update := func(current storage.KeyValue) ([]byte, error) {
		old, err := s.StoredCustom(current)
		if err != nil {
			return nil, err
		}
		base, err := s.Crv.ScaleForUpdate(old)
		if err != nil {
			return nil, err
		}
		scale, err := next(base)
		if err != nil {
			return nil, err
		}
		if expected, err = ParseResourceVersion(scale.ResourceVersion); err != nil {
			return nil, err
		}
		if expected != 0 && expected != current.ModRevision {
			return nil, &storage.StorageError{Code: storage.Conflict, Key: key}
		}
		updated, err := s.Crv.ApplyScale(old, scale)
		if err != nil {
			return nil, err
		}
		if err := s.Strategy.PrepareForUpdate(updated, old); err != nil {
			return nil, err
		}
		if err := s.Crv.Invalid(updated.GetName(), s.Crv.ValidateUpdate(ctx, updated, old)); err != nil {
			return nil, err
		}
		return s.Encode(updated)
	}
	kv, err := s.GuaranteedUpdate(ctx, key, opts.DryRun, update, storage.UpdateOptions{})
	if err != nil {
		return nil, APIError(err, s.GR, p.Name)
	}
	obj, err := s.StoredCustom(kv)
	if err != nil {
		return nil, APIError(err, s.GR, p.Name)
	}
	scale, err := s.Crv.ScaleFromObject(obj)
	if err != nil {
		return nil, APIError(err, s.GR, p.Name)
	}
	return scale, nil
}
