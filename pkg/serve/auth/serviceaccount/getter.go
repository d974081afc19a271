package serviceaccount

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apictl/apictl/pkg/storage"
)

// Getter reads the metadata of the objects tokens name: the service account and the bound pod,
// secret or node. A missing object is a NotFound error (apierrors.IsNotFound).
type Getter interface {
	Get(ctx context.Context, resource, namespace, name string) (*metav1.ObjectMeta, error)
}

// StoreGetter reads core objects from storage.Stores by resource (the server's watch caches). A
// resource without a store (pods and nodes, which apictl does not serve) holds no objects: every
// lookup in it is NotFound.
type StoreGetter struct {
	Stores map[string]storage.Store
	// Latest reads with a quorum read. Without it a read is the watch cache's current state (no
	// etcd round trip), confirmed by a quorum read only when the object is missing there, since
	// the cache may lag a create by a few milliseconds.
	Latest bool
}

// Get reads one object's metadata.
func (g StoreGetter) Get(ctx context.Context, resource, namespace, name string) (*metav1.ObjectMeta, error) {
	gr := schema.GroupResource{Resource: resource}
	st, ok := g.Stores[resource]
	if !ok {
		return nil, apierrors.NewNotFound(gr, name)
	}
	key := storage.ObjectKey("", resource, namespace, name)
	rv := "0"
	if g.Latest {
		rv = ""
	}
	kv, err := st.Get(ctx, key, storage.GetOptions{ResourceVersion: rv})
	if storage.IsNotFound(err) && rv != "" {
		kv, err = st.Get(ctx, key, storage.GetOptions{})
	}
	if err != nil {
		if storage.IsNotFound(err) {
			return nil, apierrors.NewNotFound(gr, name)
		}
		return nil, fmt.Errorf("reading %s %s/%s: %w", resource, namespace, name, err)
	}
	var obj metav1.PartialObjectMetadata
	if err := json.Unmarshal(kv.Value, &obj); err != nil {
		return nil, fmt.Errorf("decoding %s %s/%s: %w", resource, namespace, name, err)
	}
	return &obj.ObjectMeta, nil
}

// LateGetter is a Getter whose target is set once, when the server's storage exists: the
// authenticator is built with the server's configuration, before its storage starts. Until Set,
// every lookup fails, which only a server that is not serving yet could see.
type LateGetter struct {
	target atomic.Pointer[Getter]
}

// Set points the getter at g. Call it once, before the server serves.
func (l *LateGetter) Set(g Getter) { l.target.Store(&g) }

// Get forwards to the target.
func (l *LateGetter) Get(ctx context.Context, resource, namespace, name string) (*metav1.ObjectMeta, error) {
	g := l.target.Load()
	if g == nil {
		return nil, fmt.Errorf("service accounts cannot be looked up yet: storage is starting")
	}
	return (*g).Get(ctx, resource, namespace, name)
}
