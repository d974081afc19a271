// Package store is the registry-store layer of one resource route, as kube's generic registry store
// (k8s.io/apiserver/pkg/registry/generic/registry): the semantics of create, update, patch and delete
// (preconditions, finalizers, delete policy, dry run, admission) on storage, given the kind's
// descriptor and with no knowledge of HTTP. pkg/serve/handlers reads requests and writes answers
// around it.
package store

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/scale/scheme/autoscalingv1"

	"github.com/apictl/apictl/pkg/kinds"
	"github.com/apictl/apictl/pkg/patch"
	"github.com/apictl/apictl/pkg/registry"
	"github.com/apictl/apictl/pkg/registry/crconvert"
	"github.com/apictl/apictl/pkg/registry/crschema"
	"github.com/apictl/apictl/pkg/routes"
	"github.com/apictl/apictl/pkg/storage"
)

// Resource is what both layers know of the resource a route serves, made when it is installed: the
// HTTP layer reads it too.
type Resource struct {
	Patcher  *patch.Patcher
	Res      *routes.Resource
	Sub      *routes.Subresource // nil for the resource itself
	Strategy *registry.Strategy
	// Backend holds the objects: the resource's watch cache, or the storage itself.
	Backend storage.Store
	GVR     schema.GroupVersionResource
	GR      schema.GroupResource
	// ObjectGVK is the kind of the objects the route reads and writes (autoscaling/v1 Scale for scale).
	ObjectGVK schema.GroupVersionKind
	// TTL is the lifetime of written objects (Events): a create, an update or a patch attaches a
	// lease of it, as kube's TTLFunc does; 0 means they live until deleted.
	TTL time.Duration
	// AllowCreateOnUpdate lets PUT create a missing object, as kube's strategies allow for some kinds.
	AllowCreateOnUpdate bool
	// Crv is the schema of a custom resource; nil for built-in kinds.
	Crv *crschema.Validator
	// Terminating is set on the routes of a CRD being deleted: its objects may not be created.
	Terminating bool
	// Conv converts the objects of a CRD with several versions (convert.go); nil for built-in
	// resources and single-version CRDs, whose objects are stored at the version they are served.
	Conv *crconvert.Converter
	// Storage is the resource whose keys hold the objects: GR, but for a resource stored as another's
	// (routes.Resource.StoredAs), whose objects its form converts (stored.go).
	Storage schema.GroupResource
	// Form is how the stored objects become the route's (form.go).
	Form Form
}

// Env is what every route's store shares with the server around it.
type Env struct {
	Now        func() time.Time
	Authorizer authorizer.Authorizer
	// Escalation checks RBAC writes for privilege escalation; nil without RBAC.
	Escalation EscalationChecker
	// Admission returns the admission chain in force, nil when there is none.
	Admission func() Admission
	// Mapper answers matchPolicy Equivalent from the live routes.
	Mapper runtime.EquivalentResourceMapper
	// CheckNamespace refuses a create in a namespace that does not exist or is terminating.
	CheckNamespace func(ctx context.Context, gr schema.GroupResource, name, namespace string) error
	// NamespaceMarked is told of a Namespace this server marked for deletion, at when.
	NamespaceMarked func(name string, when time.Time)
}

// Store is the store of one route.
type Store struct {
	*Resource
	env    *Env
	checks checks
}

// New returns the store of a route over r, whose fields it reads as they are now to choose how writes
// are checked; env is shared by every route of a server.
func New(r *Resource, env *Env) *Store {
	return &Store{Resource: r, env: env, checks: newChecks(r)}
}

// NewStoredAs returns the form of a resource stored as another's: gvk is the route's kind, named kind in
// errors, and route the kind and version its objects are served as.
func NewStoredAs(stored *kinds.StoredForm, gvk schema.GroupVersionKind, kind string, route schema.GroupVersionKind) Form {
	return storedAs{stored: stored, gvk: gvk, kind: kind,
		routeForm: []byte(`{"kind":"` + route.Kind + `","apiVersion":"` + route.GroupVersion().String() + `",`)}
}

// NewCRDVersions returns the form of a CRD with several versions, served at version.
func NewCRDVersions(conv *crconvert.Converter, version, kind string) Form {
	return crdVersions{conv: conv, version: version, kind: kind}
}

// WriteOptions are the query parameters of create, update, patch and delete.
type WriteOptions struct {
	DryRun          bool
	FieldManager    string
	FieldValidation string
	// Managed is set when the object's managedFields are already maintained (a create by server-side
	// apply), so the write must not record the operation a second time.
	Managed bool
	// UserAgent is the client's, which names the field manager when the request names none.
	UserAgent string
}

// IsScale reports whether the route is a scale subresource.
func (s *Resource) IsScale() bool {
	return s.Sub != nil && s.ObjectGVK == autoscalingv1.SchemeGroupVersion.WithKind("Scale")
}

// Key returns the storage key of an object.
func (s *Resource) Key(namespace, name string) string {
	return storage.ObjectKey(s.Storage.Group, s.Storage.Resource, namespace, name)
}

// Prefix returns the storage prefix of a namespace's objects, or all of them.
func (s *Resource) Prefix(namespace string) string {
	return storage.ResourcePrefix(s.Storage.Group, s.Storage.Resource, namespace)
}

// ResourcePath names the resource as errors mention it: configmaps, namespaces/status.
func (s *Resource) ResourcePath() string {
	if s.Sub != nil {
		return s.Res.Plural + "/" + s.Sub.Name
	}
	return s.Res.Plural
}
