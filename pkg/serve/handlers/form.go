package handlers

import (
	"errors"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/apictl/apictl/pkg/storage"
)

// form is how a resource's stored objects become the route's, chosen once when the resource is
// installed: asStored for built-in kinds and single-version CRDs, whose stored bytes are the route's;
// crdVersions for a CRD with several versions (convert.go); storedAs for a resource stored as
// another's (stored.go). readableList and readableStream recognise asStored and pass the storage's
// page on as it is, so a LIST of a built-in kind makes no call per item.
type form interface {
	// converts reports whether a stored value must be converted before the route answers with it.
	converts(value []byte) bool
	// items returns a page of stored objects at the route's version: the same slice when none
	// converts, else a new one (items itself may be shared with the watch cache).
	items(items []storage.KeyValue) ([]storage.KeyValue, error)
	// decode decodes a stored value that converts into an object of the route's version, with its
	// resourceVersion.
	decode(kv storage.KeyValue) (runtime.Object, error)
	// toStorage converts a write's object, its kind and apiVersion set, to what is stored.
	toStorage(obj runtime.Object) (runtime.Object, error)
	// asRoute returns a stored value that converts as the route's JSON, without resourceVersion.
	asRoute(value []byte) ([]byte, error)
}

// asStored is the form of resources whose stored objects are the route's.
type asStored struct{}

var _ form = asStored{}

// errNotConverted is what asking asStored to convert answers: its values never need it.
var errNotConverted = errors.New("the resource's stored objects are not converted")

func (asStored) converts([]byte) bool                                       { return false }
func (asStored) items(items []storage.KeyValue) ([]storage.KeyValue, error) { return items, nil }
func (asStored) decode(storage.KeyValue) (runtime.Object, error)            { return nil, errNotConverted }
func (asStored) toStorage(obj runtime.Object) (runtime.Object, error)       { return obj, nil }
func (asStored) asRoute([]byte) ([]byte, error)                             { return nil, errNotConverted }
