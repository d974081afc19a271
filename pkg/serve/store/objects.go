package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	sigsjson "sigs.k8s.io/json"

	"github.com/apictl/apictl/pkg/storage"
)

// Encode returns an object's stored form: its JSON with kind and apiVersion set and without
// resourceVersion, which etcd supplies.
func (s *Store) Encode(obj runtime.Object) ([]byte, error) {
	obj.GetObjectKind().SetGroupVersionKind(s.Strategy.GVK)
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	m.SetResourceVersion("")
	// Stored as the other resource's kind, or at a CRD's storage version, whatever version the
	// write came in (form.go).
	if obj, err = s.Form.ToStorage(obj); err != nil {
		return nil, err
	}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return json.Marshal(u.Object)
	}
	return json.Marshal(obj)
}

// DecodeStored decodes a stored value into a new object of the resource's kind, with its
// resourceVersion set from the revision.
func (s *Store) DecodeStored(kv storage.KeyValue) (runtime.Object, error) {
	if s.Form.Converts(kv.Value) {
		return s.Form.Decode(kv)
	}
	obj := s.Strategy.New()
	if u, ok := obj.(*unstructured.Unstructured); ok {
		content := map[string]any{}
		if err := sigsjson.UnmarshalCaseSensitivePreserveInts(kv.Value, &content); err != nil {
			return nil, fmt.Errorf("decoding stored %s: %w", kv.Key, err)
		}
		u.Object = content
	} else if err := sigsjson.UnmarshalCaseSensitivePreserveInts(kv.Value, obj); err != nil {
		return nil, fmt.Errorf("decoding stored %s: %w", kv.Key, err)
	}
	obj.GetObjectKind().SetGroupVersionKind(s.Strategy.GVK)
	if m, err := meta.Accessor(obj); err == nil {
		m.SetResourceVersion(strconv.FormatInt(kv.ModRevision, 10))
	}
	return obj, nil
}

// respond is the body that answers with a stored object (a read, or a successful write): the stored
// bytes with their resourceVersion.
func respond(kv storage.KeyValue) ([]byte, error) {
	return storage.AppendWithResourceVersion(nil, kv)
}

// parseResourceVersion reads the resourceVersion a client sent with an object; "" is 0.
func ParseResourceVersion(rv string) (int64, error) {
	if rv == "" {
		return 0, nil
	}
	// Unsigned, as kube parses it: a sign ("+5") is not part of a revision.
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil || n == 0 || n > math.MaxInt64 {
		return 0, apierrors.NewBadRequest(fmt.Sprintf("invalid resourceVersion %q: resourceVersions come from the server, send back the one you read", rv))
	}
	return int64(n), nil
}

// mayBeTerminating is a quick look at a stored namespace for a deletionTimestamp, so that the common
// case, an active namespace, costs no decoding; a true answer is checked by decoding.
func MayBeTerminating(value []byte) bool {
	return bytes.Contains(value, []byte(`"deletionTimestamp"`))
}
