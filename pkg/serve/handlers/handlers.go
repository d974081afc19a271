// Package handlers serves the resource routes of the table from storage: get, list, watch, create,
// update, patch, delete and deletecollection, with kube's semantics, media types and Status errors.
// Objects are stored as the JSON the handlers encode, without resourceVersion; reads splice the etcd
// revision in (storage.WithResourceVersion) instead of decoding and re-encoding.
package handlers

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"sync/atomic"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"

	"github.com/apictl/apictl/pkg/features"
	"github.com/apictl/apictl/pkg/kinds"
	"github.com/apictl/apictl/pkg/patch"
	"github.com/apictl/apictl/pkg/registry"
	"github.com/apictl/apictl/pkg/registry/crconvert"
	"github.com/apictl/apictl/pkg/registry/crschema"
	"github.com/apictl/apictl/pkg/registry/tables"
	"github.com/apictl/apictl/pkg/routes"
	"github.com/apictl/apictl/pkg/serve/request"
	"github.com/apictl/apictl/pkg/serve/status"
	"github.com/apictl/apictl/pkg/storage"
)

// Config is what the handlers need.
type Config struct {
	API      *routes.API
	Registry *registry.Registry
	// Store holds every resource. Stores, when set for a resource, takes precedence (a watch cache).
	Store  storage.Store
	Stores map[schema.GroupResource]storage.Store
	Logger *slog.Logger
	// EventTTL is how long Events live (kube's --event-ttl).
	EventTTL time.Duration
	// MinRequestTimeout is the shortest a watch without timeoutSeconds lasts; each picks a random
	// timeout in [MinRequestTimeout, 2*MinRequestTimeout].
	MinRequestTimeout time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Features are the server's feature gates (WatchList allows sendInitialEvents).
	Features features.Gates
	// CustomResources validates, prunes and defaults custom resources against their CRD schemas.
	CustomResources *crschema.Set
	// Escalation, when set, vets writes of RBAC roles and bindings (escalation.go).
	Escalation EscalationChecker
	// Authorizer answers the checks of the kinds' own admission plugins (kindadmission.go); nil
	// allows everything.
	Authorizer authorizer.Authorizer
	// Creaters answer the POSTs of routes whose objects are not stored (virtual.go): every create-only
	// resource of the API (the review APIs) needs one, and a subresource such as serviceaccounts/token
	// may have one.
	Creaters map[CreateKey]Creater
}

// API serves the resource routes. It implements serve.ResourceHandler.
type API struct {
	cfg Config
	// builtin are the scopes of cfg.API; scopes are those plus the custom resources' (SetExtensions),
	// read through an atomic pointer because CRDs come and go while requests run.
	builtin map[scopeKey]*scope
	scopes  atomic.Pointer[map[scopeKey]*scope]
	// namespaces is the scope of the namespaces resource, for the lifecycle checks of creates.
	namespaces *scope
	// wake tells the namespace controller that a namespace began terminating.
	wake chan struct{}
	// recentlyDeleted holds, for namespaceLiveLookupTTL, the namespaces this server began deleting, so
	// that creates into them check with a consistent read (checkNamespace).
	recentlyDeleted *recentSet
	// protobuf decodes the protobuf bodies kubectl's typed clients send.
	protobuf *protobufDecoder
	// patcher applies patches and keeps managedFields on every write.
	patcher *patch.Patcher
	// creates are the routes a Creater answers, by route.
	creates map[scopeKey]*createRoute
	// conversions makes the converters of CRDs with several versions (convert.go).
	conversions converterFactory
	// admission is the chain writes go through (admission.go, SetAdmission); nil admits everything.
	admission atomic.Pointer[admissionBox]
	// listSeats are the seats of streamed LISTs (listbody.go): a LIST longer than a chunk produces its
	// next chunk only in a seat.
	listSeats chan struct{}
	// gzip holds the compressors of large responses (compress.go).
	gzip gzipPool
}

type scopeKey struct{ group, version, resource, subresource string }

// New builds a scope for every resource and subresource of the API.
func New(cfg Config) (*API, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Authorizer == nil {
		cfg.Authorizer = authorizerfactory.NewAlwaysAllowAuthorizer()
	}
	if cfg.MinRequestTimeout <= 0 {
		cfg.MinRequestTimeout = 1800 * time.Second
	}
	a := &API{cfg: cfg, builtin: map[scopeKey]*scope{}, wake: make(chan struct{}, 1),
		recentlyDeleted: newRecentSet(namespaceLiveLookupTTL, recentlyDeletedMax), listSeats: newListSeats()}
	var err error
	if a.protobuf, err = newProtobufDecoder(); err != nil {
		return nil, err
	}
	if a.patcher, err = patch.New(cfg.API); err != nil {
		return nil, fmt.Errorf("building the patcher: %w", err)
	}
	if err := a.addScopes(a.builtin, cfg.API, cfg.Registry, a.patcher, cfg.CustomResources, func(gr schema.GroupResource) storage.Store {
		if s, ok := cfg.Stores[gr]; ok {
			return s
		}
		return cfg.Store
	}); err != nil {
		return nil, err
	}
	a.namespaces = a.builtin[scopeKey{routes.GroupCore, "v1", "namespaces", ""}]
	a.scopes.Store(&a.builtin)
	if err := a.newCreateRoutes(); err != nil {
		return nil, err
	}
	return a, nil
}

// resource is what both layers know of the resource a route serves: the HTTP layer (scope) and the
// store layer (store) share one, made when the resource is installed.
type resource struct {
	api      *API
	patcher  *patch.Patcher
	res      *routes.Resource
	sub      *routes.Subresource // nil for the resource itself
	strategy *registry.Strategy
	// backend holds the objects: the resource's watch cache, or the storage itself.
	backend storage.Store
	gvr     schema.GroupVersionResource
	gr      schema.GroupResource
	// objectGVK is the kind of the objects the route reads and writes (autoscaling/v1 Scale for scale).
	objectGVK schema.GroupVersionKind
	listKind  string
	// ttl is the lifetime of written objects (Events): a create, an update or a patch attaches a
	// lease of it, as kube's TTLFunc does; 0 means they live until deleted.
	ttl time.Duration
	// allowCreateOnUpdate lets PUT create a missing object, as kube's strategies allow for some kinds.
	allowCreateOnUpdate bool
	// table renders the resource's objects for kubectl get; nil for scale, which has no printer.
	table *tables.Converter
	// crv is the schema of a custom resource; nil for built-in kinds.
	crv *crschema.Validator
	// goType, set for the routes a Creater answers (which have no strategy), is the Go type of
	// their objects.
	goType reflect.Type
	// terminating is set on the scopes of a CRD being deleted: its objects may not be created.
	terminating bool
	// fields selects the objects of lists and watches.
	fields *fieldFilter
	// conv converts the objects of a CRD with several versions (convert.go); nil for built-in
	// resources and single-version CRDs, whose objects are stored at the version they are served.
	conv *crconvert.Converter
	// storage is the resource whose keys hold the objects: gr, but for a resource stored as another's
	// (routes.Resource.StoredAs), whose objects its form converts (stored.go).
	storage schema.GroupResource
	// form is how the stored objects become the route's (form.go).
	form form
	// itemTypeMeta is how a stored object of the scope's kind begins, `{"kind":"K","apiVersion":"V",`:
	// what a built-in list leaves out of its items.
	itemTypeMeta []byte
}

// scope is the HTTP layer of one route: it reads requests, negotiates and encodes answers, and
// streams lists and watches, leaving the semantics of writes to its store.
type scope struct {
	*resource
	store *store
}

// store is the registry-store layer of one route, as kube's generic registry store: the semantics
// of create, update, patch and delete (preconditions, finalizers, delete policy, dry run, admission)
// on storage, with no knowledge of HTTP.
type store struct {
	*resource
}

func (a *API) newScope(res *routes.Resource, sub *routes.Subresource, gvr schema.GroupVersionResource, strategy *registry.Strategy, backend storage.Store) *scope {
	s := &resource{
		api: a, patcher: a.patcher, res: res, sub: sub, strategy: strategy, backend: backend, gvr: gvr, gr: gvr.GroupResource(), storage: gvr.GroupResource(),
		objectGVK: gvr.GroupVersion().WithKind(res.Kind), listKind: res.ListKind, form: asStored{},
	}
	if res.Custom {
		s.crv, _ = a.cfg.CustomResources.Validator(gvr)
	}
	if sub != nil {
		s.objectGVK = sub.GroupVersionKind(gvr.GroupVersion())
	}
	s.itemTypeMeta = []byte(`{"kind":"` + s.objectGVK.Kind + `","apiVersion":"` + gvr.GroupVersion().String() + `",`)
	if res.StoredAs != nil {
		s.storage = res.StoredAs.GroupResource()
	}
	var stored *kinds.StoredForm
	var selectable *kinds.FieldSelectors
	if strategy != nil {
		selectable = strategy.Fields
	}
	if strategy != nil && sub == nil && strategy.Stored != nil {
		stored = strategy.Stored
		s.form = storedAs{stored: strategy.Stored, gvk: strategy.GVK, kind: res.Kind,
			routeForm: []byte(`{"kind":"` + s.objectGVK.Kind + `","apiVersion":"` + gvr.GroupVersion().String() + `",`)}
	}
	s.fields = newFieldFilter(res, stored, selectable)
	if strategy != nil {
		rules := strategy.StoreRules()
		s.allowCreateOnUpdate = rules.AllowCreateOnUpdate && sub == nil
		if rules.ExpireAfterEventTTL {
			s.ttl = a.cfg.EventTTL
		}
	}
	return &scope{resource: s, store: &store{resource: s}}
}

// isScale reports whether the scope is a scale subresource.
func (s *resource) isScale() bool {
	return s.sub != nil && s.objectGVK == autoscalingv1.SchemeGroupVersion.WithKind("Scale")
}

// key returns the storage key of an object.
func (s *resource) key(namespace, name string) string {
	return storage.ObjectKey(s.storage.Group, s.storage.Resource, namespace, name)
}

// prefix returns the storage prefix of a namespace's objects, or all of them.
func (s *resource) prefix(namespace string) string {
	return storage.ResourcePrefix(s.storage.Group, s.storage.Resource, namespace)
}

// resourcePath names the resource as errors mention it: configmaps, namespaces/status.
func (s *resource) resourcePath() string {
	if s.sub != nil {
		return s.res.Plural + "/" + s.sub.Name
	}
	return s.res.Plural
}

// ServeResource answers one resource route. Every answer but a watch's is compressed here when it is
// large and the client accepts gzip (compress.go), as kube's APIResponseCompression does: one place
// for every verb and encoding, and watches, whose events must reach the client as they happen, left
// alone as kube leaves them.
func (a *API) ServeResource(w http.ResponseWriter, r *http.Request, route *routes.Route, p routes.Params) {
	if !a.compresses(r, route) {
		a.serveResource(w, r, route, p)
		return
	}
	gw := &gzipWriter{ResponseWriter: w, pool: &a.gzip}
	a.serveResource(gw, r, route, p)
	// Not deferred: a handler that panics to abort its response must not have the stream ended. Its
	// error is the client's connection failing, which the handlers' own writes ignore too.
	_ = gw.close()
}

// compresses reports whether a request's answer may be compressed: the gate is on, the client
// accepts gzip, and it is not a watch.
func (a *API) compresses(r *http.Request, route *routes.Route) bool {
	if !acceptsGzip(r) || !a.cfg.Features.Enabled(features.APIResponseCompression) {
		return false
	}
	switch route.Action {
	case routes.ActionWatch, routes.ActionWatchList:
		return false
	case routes.ActionList:
		watch, _ := request.QueryParamBool(r.URL.Query(), "watch")
		return !watch
	}
	return true
}

func (a *API) serveResource(w http.ResponseWriter, r *http.Request, route *routes.Route, p routes.Params) {
	if route.Action == routes.ActionPost && len(a.creates) > 0 {
		if c, ok := a.creates[scopeKey{route.Group, route.Version, route.Resource, route.Subresource}]; ok {
			if err := checkRouteMedia(route, r); err != nil {
				writeError(w, r, err)
				return
			}
			c.serve(w, r, p)
			return
		}
	}
	s, ok := (*a.scopes.Load())[scopeKey{route.Group, route.Version, route.Resource, route.Subresource}]
	if !ok {
		writeError(w, r, apierrors.NewNotFound(schema.GroupResource{Group: route.Group, Resource: route.Resource}, p.Name))
		return
	}
	if !s.res.Custom {
		// kube serves custom resources outside go-restful: their handlers negotiate alone.
		if err := checkRouteMedia(route, r); err != nil {
			writeError(w, r, err)
			return
		}
	}
	if msg := s.res.DeprecationWarning; msg != "" {
		addWarnings(w, []string{msg}) // a deprecated API warns on every request, first
	}
	r = a.withAdmissionWarnings(w, r)
	switch route.Action {
	case routes.ActionGet:
		s.get(w, r, p)
	case routes.ActionList:
		if watch, _ := request.QueryParamBool(r.URL.Query(), "watch"); watch {
			s.watch(w, r, p, "")
			return
		}
		s.list(w, r, p)
	case routes.ActionWatchList:
		s.watch(w, r, p, "")
	case routes.ActionWatch:
		s.watch(w, r, p, p.Name)
	case routes.ActionPost:
		s.create(w, r, p)
	case routes.ActionPut:
		s.update(w, r, p)
	case routes.ActionPatch:
		s.patch(w, r, p)
	case routes.ActionDelete:
		s.delete(w, r, p)
	case routes.ActionDeleteCollection:
		s.deleteCollection(w, r, p)
	default:
		writeError(w, r, apierrors.NewMethodNotSupported(s.gr, string(route.Action)))
	}
}

// writeError sends err as a Status. kube negotiates an error's encoding without the conversions a
// request may ask for (Table, PartialObjectMetadata): when the Accept header has no clause a Status
// fits, it writes the Status as indented JSON (responsewriters.WriteRawJSON), and so does this.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	if r != nil {
		if _, nerr := negotiateOutput(r.Header.Get("Accept"), 0); nerr != nil {
			status.WriteAs(w, true, status.FromError(err))
			return
		}
	}
	status.WriteError(w, r, err)
}
