package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	sigsjson "sigs.k8s.io/json"

	"github.com/apictl/apictl/pkg/kinds"
	"github.com/apictl/apictl/pkg/storage"
)

// A resource stored as another's (kube's cohabitating resources: events.k8s.io/v1 events are core v1
// events) has no keys or watch cache of its own: its store reads and writes the other resource's
// (Resource.Storage), one object seen through both APIs with one resourceVersion. Its form (storedAs)
// makes writes store the other resource's kind (Encode), and every read convert the stored object to
// the route's kind (Readable, DecodeStored), as reads of a CRD with several versions do. Its field selectors
// name its own fields, which map onto the stored resource's (the handlers' storedFieldSelector).

// storedAs is the form of a resource stored as another's.
type storedAs struct {
	stored *kinds.StoredForm
	// gvk is the route's kind, kind its name in errors.
	gvk  schema.GroupVersionKind
	kind string
	// routeForm is how an object converted to the route's kind begins (its kind and apiVersion).
	routeForm []byte
}

// Converts reports whether a value is not yet of the route's kind: one converted by an earlier read
// (a GET's table is made of the object the GET read) is not converted again.
func (f storedAs) Converts(value []byte) bool { return !bytes.HasPrefix(value, f.routeForm) }

// Decode decodes a stored object and converts it to the route's kind, with its resourceVersion set
// from the revision.
func (f storedAs) Decode(kv storage.KeyValue) (runtime.Object, error) {
	stored := f.stored.New()
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(kv.Value, stored); err != nil {
		return nil, fmt.Errorf("decoding stored %s: %w", kv.Key, err)
	}
	obj, err := f.stored.FromStored(stored)
	if err != nil {
		return nil, fmt.Errorf("converting stored %s: %w", kv.Key, err)
	}
	obj.GetObjectKind().SetGroupVersionKind(f.gvk)
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	m.SetResourceVersion(strconv.FormatInt(kv.ModRevision, 10))
	return obj, nil
}

// ToStorage converts the object of a write to the stored resource's kind, for encode.
func (f storedAs) ToStorage(obj runtime.Object) (runtime.Object, error) {
	out, err := f.stored.ToStored(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("converting a %s to its stored form: %w", f.kind, err))
	}
	out.GetObjectKind().SetGroupVersionKind(f.stored.GVK)
	return out, nil
}

// AsRoute returns a stored value as the route's kind encodes it, without resourceVersion (its place
// is found anew when it is answered).
func (f storedAs) AsRoute(value []byte) ([]byte, error) {
	obj, err := f.Decode(storage.KeyValue{Value: value})
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if m, err := meta.Accessor(obj); err == nil {
		m.SetResourceVersion("")
	}
	return json.Marshal(obj)
}

// Items converts a page of stored objects to the route's kind, into a new slice.
func (f storedAs) Items(items []storage.KeyValue) ([]storage.KeyValue, error) {
	out := make([]storage.KeyValue, len(items))
	copy(out, items)
	for i := range out {
		if !f.Converts(items[i].Value) {
			continue
		}
		value, err := f.AsRoute(items[i].Value)
		if err != nil {
			return nil, err
		}
		out[i].Value, out[i].RVAt = value, 0
	}
	return out, nil
}

// kindConverter converts the scope's objects to those of the resources stored alike, for admission
// plugins that match those (matchPolicy Equivalent); nil for resources with no such twin.
func (s *Store) kindConverter() func(in, out runtime.Object) error {
	if s.Sub != nil || s.Strategy == nil {
		return nil
	}
	return s.Strategy.Equivalent
}
