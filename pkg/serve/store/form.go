package store

import (
	"errors"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/apictl/apictl/pkg/storage"
)

// Form is how a resource's stored objects become the route's, chosen once when the resource is
// installed: asStored for built-in kinds and single-version CRDs, whose stored bytes are the route's;
// crdVersions for a CRD with several versions (convert.go); storedAs for a resource stored as
// another's (stored.go). readableList and readableStream recognise asStored and pass the storage's
// page on as it is, so a LIST of a built-in kind makes no call per item.
type Form interface {
	// Converts reports whether a stored value must be converted before the route answers with it.
	Converts(value []byte) bool
	// Items returns a page of stored objects at the route's version: the same slice when none
	// converts, else a new one (items itself may be shared with the watch cache).
	Items(items []storage.KeyValue) ([]storage.KeyValue, error)
	// Decode decodes a stored value that converts into an object of the route's version, with its
	// resourceVersion.
	Decode(kv storage.KeyValue) (runtime.Object, error)
	// ToStorage converts a write's object, its kind and apiVersion set, to what is stored.
	ToStorage(obj runtime.Object) (runtime.Object, error)
	// AsRoute returns a stored value that converts as the route's JSON, without resourceVersion.
	AsRoute(value []byte) ([]byte, error)
}

// AsStored is the form of resources whose stored objects are the route's.
type AsStored struct{}

// errNotConverted is what asking asStored to convert answers: its values never need it.
var errNotConverted = errors.New("the resource's stored objects are not converted")

func (AsStored) Converts([]byte) bool { return false }

func (AsStored) Items(items []storage.KeyValue) ([]storage.KeyValue, error) { return items, nil }

func (AsStored) Decode(storage.KeyValue) (runtime.Object, error) { return nil, errNotConverted }

func (AsStored) ToStorage(obj runtime.Object) (runtime.Object, error) { return obj, nil }

func (AsStored) AsRoute([]byte) ([]byte, error) { return nil, errNotConverted }

var _ Form = AsStored{}
var _ Form = crdVersions{}
var _ Form = storedAs{}
