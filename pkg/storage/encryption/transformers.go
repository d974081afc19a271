package encryption

import (
	"strings"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/storage/value"
	"k8s.io/apiserver/pkg/storage/value/encrypt/identity"

	"github.com/apictl/apictl/pkg/storage"
)

// For returns the transformer of a resource as kube chooses it: the resource's own list, else its
// group's wildcard (`*.apps`, `*.` for the core group), else `*.*`, else none: values are stored as
// they are and reading an encrypted one fails ("identity transformer tried to read encrypted data").
func (c *Config) For(gr schema.GroupResource) value.Transformer {
	if t := c.overrides[gr]; t != nil {
		return t
	}
	if t := c.overrides[schema.GroupResource{Group: gr.Group, Resource: "*"}]; t != nil {
		return t
	}
	if t := c.overrides[anyGroupAnyResource]; t != nil {
		return t
	}
	return identity.NewEncryptCheckTransformer()
}

// Hash identifies the content of the file the configuration was read from.
func (c *Config) Hash() string { return c.hash }

// Transformers gives the etcd3 store the transformer of each key's resource, following the current
// configuration, which SetConfig replaces while the server runs (--encryption-provider-config-
// automatic-reload). It is safe for concurrent use.
type Transformers struct {
	served []schema.GroupResource
	// groups are the served groups other than the core group, to tell a group's key from a core one's.
	groups  map[string]bool
	current atomic.Pointer[resolved]
}

// resolved is one configuration with its transformers looked up for the served resources ahead of
// time, by the key prefix of each resource (storage.ResourcePrefix without its final "/").
type resolved struct {
	config   *Config
	byPrefix map[string]value.Transformer
}

// NewTransformers serves cfg for the keys of pkg/storage (storage.ObjectKey). served are the
// resources the server knows at start, looked up once; the keys of any other resource are resolved
// when they are used.
func NewTransformers(cfg *Config, served []schema.GroupResource) *Transformers {
	t := &Transformers{served: served, groups: map[string]bool{}}
	for _, gr := range served {
		if gr.Group != "" {
			t.groups[gr.Group] = true
		}
	}
	t.SetConfig(cfg)
	return t
}

// SetConfig makes cfg the configuration of every read and write that starts from now on.
func (t *Transformers) SetConfig(cfg *Config) {
	r := &resolved{config: cfg, byPrefix: make(map[string]value.Transformer, len(t.served))}
	for _, gr := range t.served {
		r.byPrefix[strings.TrimSuffix(storage.ResourcePrefix(gr.Group, gr.Resource, ""), "/")] = cfg.For(gr)
	}
	t.current.Store(r)
}

// Config returns the configuration in force.
func (t *Transformers) Config() *Config { return t.current.Load().config }

// TransformerFor returns the transformer for the values under key: an object's key or a list or
// watch prefix, such as "secrets/default/a" or "apps/deployments/". It never returns nil.
func (t *Transformers) TransformerFor(key string) value.Transformer {
	r := t.current.Load()
	i := strings.IndexByte(key, '/')
	if i < 0 {
		return r.config.For(schema.GroupResource{Resource: key})
	}
	// A core resource's key starts with the resource, another group's with the group: no group is
	// named like a core resource, so the first match is the right one.
	if tr, ok := r.byPrefix[key[:i]]; ok {
		return tr
	}
	rest := key[i+1:]
	if j := strings.IndexByte(rest, '/'); j >= 0 {
		if tr, ok := r.byPrefix[key[:i+1+j]]; ok {
			return tr
		}
		rest = rest[:j]
	}
	return r.config.For(t.keyResource(key[:i], rest))
}

// keyResource tells the resource of a key the server did not serve at start (a custom resource
// defined later): its first segment is a group if a served resource has that group, or if it has a
// dot, as custom resources' groups always do and core resources never do.
func (t *Transformers) keyResource(first, second string) schema.GroupResource {
	if t.groups[first] || strings.Contains(first, ".") {
		return schema.GroupResource{Group: first, Resource: second}
	}
	return schema.GroupResource{Resource: first}
}
