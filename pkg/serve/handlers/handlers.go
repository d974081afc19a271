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

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"

	"github.com/apictl/apictl/pkg/features"
	"github.com/apictl/apictl/pkg/patch"
	"github.com/apictl/apictl/pkg/registry"
	"github.com/apictl/apictl/pkg/registry/crschema"
	"github.com/apictl/apictl/pkg/registry/tables"
	"github.com/apictl/apictl/pkg/routes"
	"github.com/apictl/apictl/pkg/serve/request"
	"github.com/apictl/apictl/pkg/serve/status"
	"github.com/apictl/apictl/pkg/serve/store"
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
	conversions ConverterFactory
	// admission is the chain writes go through (admission.go, SetAdmission); nil admits everything.
	admission atomic.Pointer[admissionBox]
	// listSeats are the seats of streamed LISTs (listbody.go): a LIST longer than a chunk produces its
	// next chunk only in a seat.
	listSeats chan struct{}
	// gzip holds the compressors of large responses (compress.go).
	gzip *gzipPool
	// env is what every route's store shares with the API.
	env *store.Env
}

// Admission is the admission chain writes go through (store.Admission).
type Admission = store.Admission

// EscalationChecker checks RBAC writes for privilege escalation (store.EscalationChecker).
type EscalationChecker = store.EscalationChecker

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
		recentlyDeleted: newRecentSet(namespaceLiveLookupTTL, recentlyDeletedMax), listSeats: newListSeats(), gzip: newGzipPool()}
	a.env = &store.Env{Now: cfg.Now, Authorizer: cfg.Authorizer, Escalation: cfg.Escalation, Admission: a.activeAdmission,
		Mapper: equivalents{a}, CheckNamespace: a.checkNamespace, NamespaceMarked: a.namespaceMarked}
	var err error
	if a.protobuf, err = newProtobufDecoder(); err != nil {
		return nil, err
	}
	if a.patcher, err = patch.New(cfg.API); err != nil {
		return nil, fmt.Errorf("building the patcher: %w", err)
	}
	if err := a.addScopes(a.builtin, scopeSource{api: cfg.API, registry: cfg.Registry, patcher: a.patcher, customResources: cfg.CustomResources,
		storeOf: func(gr schema.GroupResource) storage.Store {
			if s, ok := cfg.Stores[gr]; ok {
				return s
			}
			return cfg.Store
		}}); err != nil {
		return nil, err
	}
	a.namespaces = a.builtin[scopeKey{routes.GroupCore, "v1", "namespaces", ""}]
	a.scopes.Store(&a.builtin)
	if err := a.newCreateRoutes(); err != nil {
		return nil, err
	}
	return a, nil
}

// resource is what the HTTP layer knows of the resource a route serves: the store layer's Resource,
// shared with the route's store, and what only reads and lists need.
type resource struct {
	*store.Resource
	api      *API
	listKind string
	// table renders the resource's objects for kubectl get; nil for scale, which has no printer.
	table *tables.Converter
	// goType, set for the routes a Creater answers (which have no strategy), is the Go type of
	// their objects.
	goType reflect.Type
	// fields selects the objects of lists and watches.
	fields *fieldFilter
	// shape is how the route's objects look on the wire: typed or unstructured.
	shape shape
	// verbs answer the actions that read or write one object: the object's own, or a Scale's.
	verbs verbs
	// itemTypeMeta is how a stored object of the scope's kind begins, `{"kind":"K","apiVersion":"V",`:
	// what a built-in list leaves out of its items.
	itemTypeMeta []byte
}

// scope is the HTTP layer of one route: it reads requests, negotiates and encodes answers, and
// streams lists and watches, leaving the semantics of writes to its store.
type scope struct {
	*resource
	store *store.Store
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
	gw := &gzipWriter{ResponseWriter: w, pool: a.gzip}
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
	if s.shape.checksRouteMedia() {
		if err := checkRouteMedia(route, r); err != nil {
			writeError(w, r, err)
			return
		}
	}
	if msg := s.Res.DeprecationWarning; msg != "" {
		addWarnings(w, []string{msg}) // a deprecated API warns on every request, first
	}
	r = a.withAdmissionWarnings(w, r)
	switch route.Action {
	case routes.ActionGet:
		s.verbs.get(s, w, r, p)
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
		s.verbs.update(s, w, r, p)
	case routes.ActionPatch:
		s.verbs.patch(s, w, r, p)
	case routes.ActionDelete:
		s.delete(w, r, p)
	case routes.ActionDeleteCollection:
		s.deleteCollection(w, r, p)
	default:
		writeError(w, r, apierrors.NewMethodNotSupported(s.GR, string(route.Action)))
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
