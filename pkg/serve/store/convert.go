package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/apictl/apictl/pkg/registry/crconvert"
	"github.com/apictl/apictl/pkg/storage"
)

// crdVersions is the form of a CRD with several versions.
type crdVersions struct {
	conv *crconvert.Converter
	// version is the route's, kind its kind's name in errors.
	version, kind string
}

func (f crdVersions) Converts(value []byte) bool { return !f.conv.AtVersion(value, f.version) }

// Items converts, in one batch (a webhook gets one ConversionReview), the objects of a page that are
// at another version, with a 500 worded as kube words a read that fails to convert.
func (f crdVersions) Items(items []storage.KeyValue) ([]storage.KeyValue, error) {
	var which []int
	for i := range items {
		if f.Converts(items[i].Value) {
			which = append(which, i)
		}
	}
	if len(which) == 0 {
		return items, nil
	}
	values := make([][]byte, len(which))
	for n, i := range which {
		values[n] = items[i].Value
	}
	objs, err := f.conv.Decode(values, f.version)
	if err != nil {
		return nil, readConversionError(items, which, err)
	}
	out := make([]storage.KeyValue, len(items))
	copy(out, items)
	for n, i := range which {
		value, err := json.Marshal(objs[n].Object)
		if err != nil {
			return nil, apierrors.NewInternalError(fmt.Errorf("encoding a converted %s: %w", f.kind, err))
		}
		out[i].Value, out[i].RVAt = value, 0 // a new value: its resourceVersion place is found anew
	}
	return out, nil
}

// readConversionError is kube's answer to a read (get, list, watch, delete) of an object that does not
// convert: its storage reports the object as corrupt, a 500 InternalError naming the key and revision.
func readConversionError(items []storage.KeyValue, which []int, err error) error {
	kv := items[which[0]]
	var ce *crconvert.Error
	if errors.As(err, &ce) && ce.Index < len(which) {
		kv = items[which[ce.Index]]
	}
	return apierrors.NewInternalError(fmt.Errorf("StorageError: corrupt object, Code: 7, Key: /%s, ResourceVersion: 0, AdditionalErrorMsg: object not decodable revision=%d: %w",
		kv.Key, kv.ModRevision, err))
}

// Decode decodes a stored object that is at another version than the route's into the route's
// version, for a write to start from. Failing, it is kube's 500 for an update whose stored object
// does not convert (a Status without reason).
func (f crdVersions) Decode(kv storage.KeyValue) (runtime.Object, error) {
	objs, err := f.conv.Decode([][]byte{kv.Value}, f.version)
	if err != nil {
		return nil, plainInternalError(fmt.Sprintf("object not decodable revision=%d: %v", kv.ModRevision, err))
	}
	objs[0].SetResourceVersion(strconv.FormatInt(kv.ModRevision, 10))
	return objs[0], nil
}

// ToStorage converts the object of a write to the storage version. Failing, it is kube's 500 for a
// write whose object does not convert: a Status with the converter's message and no reason.
func (f crdVersions) ToStorage(obj runtime.Object) (runtime.Object, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	out, err := f.conv.ToStorage(u)
	if err != nil {
		return nil, plainInternalError(err.Error())
	}
	return out, nil
}

// AsRoute is the body of a dry-run create: the object as it would be stored, at the route's version.
func (f crdVersions) AsRoute(value []byte) ([]byte, error) {
	objs, err := f.conv.Decode([][]byte{value}, f.version)
	if err != nil {
		return nil, plainInternalError(err.Error())
	}
	return json.Marshal(objs[0].Object)
}

// Readable returns a stored object at the route's version: as it is, or converted.
func (s *Store) Readable(kv storage.KeyValue) (storage.KeyValue, error) {
	if !s.Form.Converts(kv.Value) {
		return kv, nil
	}
	items, err := s.Form.Items([]storage.KeyValue{kv})
	if err != nil {
		return kv, err
	}
	return items[0], nil
}

// Respond is the body that answers with a stored object: at the route's version, with its
// resourceVersion.
func (s *Store) Respond(kv storage.KeyValue) ([]byte, error) {
	kv, err := s.Readable(kv)
	if err != nil {
		return nil, err
	}
	return respond(kv)
}

// DryRunBody is the body of a dry-run create: the object as it would be stored, at the route's version.
func (s *Store) DryRunBody(value []byte) ([]byte, error) {
	if !s.Form.Converts(value) {
		return value, nil
	}
	return s.Form.AsRoute(value)
}

// CheckConvertible refuses, as kube's store does, to delete an object of another version that does not
// convert to the route's: kube decodes the object it deletes, and answers with the read's 500.
func (s *Store) CheckConvertible(kv storage.KeyValue) error {
	_, err := s.Readable(kv)
	return err
}

// plainInternalError is the Status kube's error writer makes of an error that is not a Status: code
// 500 and the message, with no reason or details.
func plainInternalError(msg string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusInternalServerError, Message: msg}}
}

// ReadableList returns a page of a LIST with its objects at the route's version (see form.items);
// res itself, which may be shared with the watch cache, is not changed.
func (s *Store) ReadableList(res *storage.ListResult) (*storage.ListResult, error) {
	if _, ok := s.Form.(AsStored); ok {
		return res, nil
	}
	items, err := s.Form.Items(res.Items)
	if err != nil {
		return nil, err
	}
	out := *res
	out.Items = items
	return &out, nil
}

// ReadableStream returns a page of a LIST whose objects are converted to the route's version in
// batches as they are read (see form.items); res itself is not changed. A conversion that fails
// after the list's first bytes were sent cuts the connection, where kube, which converts the whole list
// before it writes any of it, answers 500: the price of never holding a whole converted list.
func (s *Store) ReadableStream(res *storage.ListResult) *storage.ListResult {
	if _, ok := s.Form.(AsStored); ok {
		return res
	}
	out := *res
	out.Items = nil
	out.Stream = func(fn func(storage.KeyValue) error) error {
		batch := make([]storage.KeyValue, 0, min(readableBatch, len(res.Items)+1))
		emit := func() error {
			items, err := s.Form.Items(batch)
			if err != nil {
				return err
			}
			for _, kv := range items {
				if err := fn(kv); err != nil {
					return err
				}
			}
			batch = batch[:0]
			return nil
		}
		err := EachItem(res, func(kv storage.KeyValue) error {
			if batch = append(batch, kv); len(batch) < readableBatch {
				return nil
			}
			return emit()
		})
		if err != nil {
			return err
		}
		return emit()
	}
	return &out
}

// readableBatch is how many objects a LIST converts at a time: one conversion (a webhook's request)
// per batch, and no more than a batch of converted objects in memory, whatever the list's size.
const readableBatch = 500

// EachItem calls fn with each item of a page: those the store streams, then those it returned.
func EachItem(res *storage.ListResult, fn func(kv storage.KeyValue) error) error {
	if res.Stream != nil {
		if err := res.Stream(fn); err != nil {
			return err
		}
	}
	for _, kv := range res.Items {
		if err := fn(kv); err != nil {
			return err
		}
	}
	return nil
}
