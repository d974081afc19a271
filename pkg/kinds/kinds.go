// Package kinds describes an API kind in one value, so that everything apictl knows of a kind lives in
// the kind's own package (pkg/kinds/<group>/<kind>) and is registered by one line
// (pkg/kinds/builtin). The route model, the registry's rules, the table printer and the store's
// delete policy read a kind from its Kind value; none of them switches on kind names for a kind
// described here.
package kinds

import (
	"context"
	"log/slog"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"

	"github.com/apictl/apictl/pkg/routes/model"
)

// Kind is one kind's descriptor.
type Kind struct {
	// Group and Version are those the kind is served at.
	Group, Version string
	// Resource is the kind's entry in the route model. Its ListKind and StorageVersionHash may be left
	// empty: Complete derives them as kube does.
	Resource model.Resource
	// NameRule checks an object's name; nil is kube's default, a DNS subdomain.
	NameRule func(name string, prefix bool) []string
	// Strategy is what the kind adds to the generic metadata rules; nil for a kind with none.
	Strategy Strategy
	// Table is kube's printer of the kind; nil prints kube's default NAME and CREATED AT.
	Table *Table
	// Store is how kube's generic store treats the kind where kinds differ.
	Store StoreRules
	// Fields are the fields beyond metadata that lists and watches may select by; nil for none.
	Fields *FieldSelectors
	// StoredAs is set for a kind served from another kind's storage.
	StoredAs *StoredForm
	// Equivalent converts between the kind's objects and those of the kinds stored alike (an Event of
	// either API), for admission webhooks and policies that match the other (matchPolicy
	// Equivalent); nil for a kind with no such twin.
	Equivalent func(in, out runtime.Object) error
	// Controllers are the cluster-wide controllers that keep the kind's objects, as
	// kube-controller-manager runs them.
	Controllers []Controller
	// Admission are kube's built-in validating admission plugins that belong to the kind (a CSR's
	// approval needs the approve verb on its signer). They run after the kind's validation on every
	// create and update of the kind and of its subresources, configured webhooks or not.
	Admission []Admission
	// Upstream names the k8s.io/kubernetes files that the kind's ported parts follow.
	Upstream []Upstream
}

// GroupVersionKind names the kind.
func (k Kind) GroupVersionKind() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: k.Group, Version: k.Version, Kind: k.Resource.Kind}
}

// Complete returns k with what its route-model entry derives from its names: the list kind and
// discovery's storageVersionHash.
func (k Kind) Complete() Kind {
	if k.Resource.ListKind == "" {
		k.Resource.ListKind = k.Resource.Kind + "List"
	}
	if k.StoredAs != nil {
		// discovery's hash names the storage version, which is the stored kind's.
		stored := k.StoredAs.Resource
		k.Resource.StoredAs = &stored
		if k.Resource.StorageVersionHash == "" {
			k.Resource.StorageVersionHash = model.StorageVersionHash(stored.Group, stored.Version, k.StoredAs.GVK.Kind)
		}
	}
	if k.Resource.StorageVersionHash == "" {
		k.Resource.StorageVersionHash = model.StorageVersionHash(k.Group, k.Version, k.Resource.Kind)
	}
	return k
}

// Strategy is a kind's own part of creating and updating its objects, as kube's REST strategies
// have it. Objects are the kind's k8s.io/api type.
type Strategy interface {
	// PrepareForCreate defaults fields and clears what a create may not set.
	PrepareForCreate(obj runtime.Object)
	// PrepareForUpdate keeps what an update of the main resource may not change.
	PrepareForUpdate(obj, old runtime.Object)
	Validate(obj runtime.Object) field.ErrorList
	ValidateUpdate(obj, old runtime.Object) field.ErrorList
}

// Defaulter is a Strategy with the defaults kube's decoder applies (its SetDefaults_ functions),
// which run before managedFields are computed.
type Defaulter interface {
	Default(obj runtime.Object)
}

// Warner is a Strategy with kube's WarningsOnCreate and WarningsOnUpdate: what a write that passed
// validation is told in Warning headers (writes to a status subresource are told nothing).
type Warner interface {
	WarningsOnCreate(obj runtime.Object) []string
	WarningsOnUpdate(obj, old runtime.Object) []string
}

// Table is a kind's printer: its column definitions and the cells of one object's row, in order.
type Table struct {
	Columns []metav1.TableColumnDefinition
	// Cells returns obj's row; now is the time ages are measured to.
	Cells func(obj runtime.Object, now time.Time) ([]any, error)
	// NullEmpty writes an empty table's rows as null, as convertors that append to a nil slice do
	// (kube's default convertor and the CRDs' own); kube's printers write [].
	NullEmpty bool
}

// StoreRules are the settings of kube's generic store (k8s.io/apiserver registry.Store and the
// strategy's Allow* methods) that differ between kinds. The zero value is kube's most common kind.
type StoreRules struct {
	// DeletePolicy is the garbage-collection policy a delete without one gets.
	DeletePolicy DeletePolicy
	// AllowCreateOnUpdate lets a PUT create a missing object (the strategy's AllowCreateOnUpdate).
	AllowCreateOnUpdate bool
	// RequireResourceVersion refuses a PUT without metadata.resourceVersion (the strategy's
	// AllowUnconditionalUpdate returning false).
	RequireResourceVersion bool
	// ReturnDeletedObject answers a delete that removed the object with the object as it was, not a
	// Success Status (the store's ReturnDeletedObject).
	ReturnDeletedObject bool
	// ExpireAfterEventTTL writes each object with a lease of the server's --event-ttl, as kube's
	// Event store does (its TTLFunc): an update or a patch starts the lease again.
	ExpireAfterEventTTL bool
}

// DeletePolicy is a kind's default garbage-collection policy, as its kube strategy's
// DefaultGarbageCollectionPolicy says.
type DeletePolicy int

const (
	// DeleteDependents is Background, the default of every kind but a few.
	DeleteDependents DeletePolicy = iota
	// OrphanDependents orphans by default (kube's batch/v1 Jobs, v1 ReplicationControllers).
	OrphanDependents
	// Unsupported kinds never get the garbage collector's finalizers (kube's Events).
	Unsupported
)

// Upstream is one k8s.io/kubernetes file a kind's code follows.
type Upstream struct {
	// Path is the file's path in k8s.io/kubernetes: pkg/apis/core/validation/validation.go.
	Path string
	// Version is the release it was read at: v1.37.2.
	Version string
	// Parts names what was ported: ValidateConfigMap.
	Parts string
}

// StatusStrategy is a Strategy of a kind with a status subresource: what a write to status keeps and
// what it must hold, as kube's status strategies have it. A kind whose Resource lists a "status"
// subresource must implement it.
type StatusStrategy interface {
	// PrepareForStatusUpdate returns the object to store: old with obj's status (kube's status
	// strategies keep everything else, metadata's labels and annotations included, as stored).
	PrepareForStatusUpdate(obj, old runtime.Object) runtime.Object
	// ValidateStatusUpdate is the kind's Validate<Kind>StatusUpdate; the generic metadata checks
	// run before it.
	ValidateStatusUpdate(obj, old runtime.Object) field.ErrorList
}

// MetaValidator is a Strategy whose Validate checks an object's metadata itself on create, with
// its name rule, at the point kube's validation does (a Service checks its cluster IPs first and
// alone): the generic metadata checks are then skipped on create, since a name the kind accepts
// always passes them.
type MetaValidator interface {
	ValidatesMeta()
}

// Requester is a Strategy whose create records who asked, as kube's strategies read the request's
// user from its context (a CSR's spec.username). PrepareForCreateBy runs after PrepareForCreate; u
// is never nil.
type Requester interface {
	PrepareForCreateBy(obj runtime.Object, u user.Info)
}

// SubresourceStrategy is a Strategy of a kind whose subresources besides status write their own part
// of the object (a CSR's approval writes its conditions): each such subresource of the kind's
// Resource is handled here, by name.
type SubresourceStrategy interface {
	// WritesSubresource reports whether sub is one of them.
	WritesSubresource(sub string) bool
	// PrepareForSubresourceUpdate returns the object to store from what the client sent (obj) and
	// what is stored (old). The server-owned metadata is reset from old afterwards.
	PrepareForSubresourceUpdate(sub string, obj, old runtime.Object) runtime.Object
	// ValidateSubresourceUpdate is the subresource's Validate...Update; the generic metadata checks
	// run before it.
	ValidateSubresourceUpdate(sub string, obj, old runtime.Object) field.ErrorList
}

// Admission is one of kube's built-in validating admission plugins, for one kind.
type Admission struct {
	// Name is kube's plugin name (CertificateApproval).
	Name string
	// Validate vets a write as the plugin does, with the server's authorizer; it refuses with kube's
	// Forbidden error (admission.NewForbidden).
	Validate func(ctx context.Context, a admission.Attributes, authz authorizer.Authorizer) error
}

// Controller is a cluster-wide controller that belongs to a kind, as kube-controller-manager runs
// it: once per cluster, on the replica that holds the controllers' Lease.
type Controller struct {
	// Name is kube-controller-manager's name for it, which --controllers selects (flags.ControllerNames
	// must list it).
	Name string
	// New builds the controller while the server is built: it asks Informers for the informers it
	// needs there, so that the server starts them with the others. The run it returns blocks until
	// ctx ends; it is called again, with a fresh ctx, each time this replica wins the Lease back, so
	// it keeps its queues and state inside itself.
	New func(c ControllerContext) (run func(ctx context.Context), err error)
}

// ControllerContext is what a kind's controller is built from: clients of the server itself.
type ControllerContext struct {
	Client  kubernetes.Interface
	Dynamic dynamic.Interface
	// Metadata lists and watches objects as PartialObjectMetadata: for controllers that need only
	// their metadata, as kube-controller-manager's use metadata informers, without decoding (and
	// keeping) whole objects.
	Metadata  metadata.Interface
	Informers informers.SharedInformerFactory
	Logger    *slog.Logger
	// Signing is the CA kube-controller-manager's CSR signers sign with.
	Signing Signing
}

// Signing is kube-controller-manager's --cluster-signing-cert-file, --cluster-signing-key-file and
// --cluster-signing-duration. Empty files mean no signer runs.
type Signing struct {
	CertFile, KeyFile string
	// Duration is the longest a signed certificate lives.
	Duration time.Duration
}
