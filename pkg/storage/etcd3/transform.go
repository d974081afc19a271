package etcd3

import (
	"bytes"
	"context"
	"fmt"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"k8s.io/apiserver/pkg/storage/value"
	"k8s.io/apiserver/pkg/storage/value/encrypt/identity"

	"github.com/apictl/apictl/pkg/storage"
)

// Transformers chooses how each resource's values are stored: encryption at rest
// (--encryption-provider-config). The store encrypts before every put and decrypts after every read,
// list and watch event, so its callers, the watch cache included, only see plaintext.
type Transformers interface {
	// TransformerFor returns the transformer of the values under key, a caller's key or list prefix
	// ("secrets/default/a", "apps/deployments/").
	TransformerFor(key string) value.Transformer
}

// transformError is a value the store could not encrypt or decrypt. Its message is the
// transformer's, as kube's (the handlers answer it with 500 "Internal error occurred: identity
// transformer tried to read encrypted data").
type transformError struct {
	err error
}

func (e *transformError) Error() string { return e.err.Error() }
func (e *transformError) Unwrap() error { return e.err }

// encryptedPrefix starts every encrypted value (k8s:enc:<provider>:v1:).
var encryptedPrefix = []byte("k8s:enc:")

// needsDecode reports whether a value must go through decode: there is a transformer, or the value is
// encrypted although the store has no configuration (an error).
func needsDecode(t value.Transformer, data []byte) bool {
	return t != nil || bytes.HasPrefix(data, encryptedPrefix)
}

// codec turns a caller's values into what etcd holds and back: the store's encryption at rest, bound
// to the full etcd key (prefix included). It is a value in the Store, so that no request pays for it.
type codec struct {
	// transformers encrypts values at rest; nil stores them as they are.
	transformers Transformers
	// prefix is the etcd key prefix the namespace wrappers add: a transformer authenticates the full key.
	prefix string
}

// transformer returns the transformer of key's values, nil when the store stores values unchanged.
func (c *codec) transformer(key string) value.Transformer {
	if c.transformers == nil {
		return nil
	}
	return c.transformers.TransformerFor(key)
}

// keyContext is the authenticated data of a value, as kube binds it: the full etcd key, prefix
// included, so that a value moved to another key does not decrypt (with aesgcm). It is built only
// when a transformer asks (aesgcm does; aescbc, secretbox and identity do not).
type keyContext struct {
	prefix, key string
}

// AuthenticatedData implements value.Context.
func (c *keyContext) AuthenticatedData() []byte { return []byte(c.prefix + c.key) }

// toStorage turns a value into what is put in etcd.
func (c *codec) toStorage(ctx context.Context, t value.Transformer, key string, data []byte) ([]byte, error) {
	if t == nil {
		return data, nil
	}
	out, err := t.TransformToStorage(ctx, data, &keyContext{prefix: c.prefix, key: key})
	if err != nil {
		return nil, &transformError{err: err}
	}
	return out, nil
}

// decode turns what etcd holds at kv into the caller's value. stale says the value was not written
// by the transformer's first provider and key (an update must rewrite it, even unchanged).
func (c *codec) decode(ctx context.Context, t value.Transformer, kv *mvccpb.KeyValue) (_ storage.KeyValue, stale bool, _ error) {
	return c.decodeWith(ctx, t, kv, nil)
}

// decodeWith is decode with a keyContext to fill in, so that a list reuses one for all its items; nil
// makes one when a transformer runs.
func (c *codec) decodeWith(ctx context.Context, t value.Transformer, kv *mvccpb.KeyValue, dc *keyContext) (_ storage.KeyValue, stale bool, _ error) {
	out := keyValue(kv)
	if t == nil {
		if !bytes.HasPrefix(kv.Value, encryptedPrefix) {
			return out, false, nil
		}
		// Encrypted data and no configuration: kube's identity transformer says what is wrong.
		t = identity.NewEncryptCheckTransformer()
	}
	if dc == nil {
		dc = &keyContext{prefix: c.prefix}
	}
	dc.key = out.Key
	data, stale, err := t.TransformFromStorage(ctx, kv.Value, dc)
	if err != nil {
		return storage.KeyValue{}, false, &transformError{err: err}
	}
	out.Value, out.RVAt = data, 0
	return out, stale, nil
}

// decodeListItem is decode for a list, whose errors name the key as kube's do; dc is the list's.
func (c *codec) decodeListItem(ctx context.Context, t value.Transformer, kv *mvccpb.KeyValue, dc *keyContext) (storage.KeyValue, error) {
	out, _, err := c.decodeWith(ctx, t, kv, dc)
	if err != nil {
		return storage.KeyValue{}, &transformError{err: fmt.Errorf("unable to transform key %q: %w", c.prefix+string(kv.Key), err.(*transformError).err)}
	}
	return out, nil
}
