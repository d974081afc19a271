// Package crds is the CRD controller: the served APIs of the stored CustomResourceDefinitions on
// every replica (Controller.Run), their names, conditions and cleanup once per cluster
// (Controller.Lead). pkg/apiserver wires it; its tests there run it on real servers.
package crds

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset/typed/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/apictl/apictl/pkg/controllers/crdnames"
	"github.com/apictl/apictl/pkg/routes"
	"github.com/apictl/apictl/pkg/serve/handlers"
	"github.com/apictl/apictl/pkg/storage"
	"github.com/apictl/apictl/pkg/storage/cacher"
)

// Controller turns the CustomResourceDefinitions stored in the cluster into served APIs, on every
// replica: it follows the CRDs' watch, builds the handlers and watch cache of each established CRD
// once per change of it, and swaps the server's API and the handlers' custom resources whole. On the
// replica that holds the controllers' Lease (Lead) it also decides the accepted names and conditions
// (crdnames), serves what it decided at once, stores it, and deletes a deleted CRD's instances before
// letting it go; the other replicas serve what is stored, so that every replica serves the names the
// leader wrote and a deleted CRD is cleaned up once. What kube splits into its naming, establishing,
// finalizer and API-serving controllers is one loop here, so that a batch of changes costs one swap.
type Controller struct {
	server    Server
	builtin   *routes.API
	handlers  *handlers.API
	store     storage.Store // where custom resources are stored (etcd)
	crds      storage.Store // where CRDs are read (their watch cache)
	client    apiextensionsclient.CustomResourceDefinitionsGetter
	bootstrap []routes.CRD
	log       *slog.Logger

	// synced closes, and is replaced, after every sync that follows the first list: waitServed
	// checks again then, so that /readyz turns green with every stored CRD served.
	syncMu sync.Mutex
	synced chan struct{}
	syncs  int

	// Owned by run's goroutine.
	objs   map[string]*apiextensionsv1.CustomResourceDefinition // by storage key
	served map[string]*servedCRD                                // by CRD name
	wake   chan struct{}

	cleaningMu sync.Mutex
	cleaning   map[string]bool // CRDs whose cleanup runs

	cachesMu sync.Mutex
	caches   map[schema.GroupResource]*cacher.Cacher // the served CRDs' watch caches, for metrics
	// cachesChanged, when set, is called each time caches (and the API) changed: the garbage
	// collector follows custom resources through it.
	cachesChanged func()

	statuses  chan *apiextensionsv1.CustomResourceDefinition
	writingMu sync.Mutex
	writing   map[string]bool // name@resourceVersion of the statuses being written

	// leadCtx is the context of the current term while this replica holds the Lease, else nil;
	// leadWG counts the cleanups started in the term, which the term waits for.
	leadMu  sync.Mutex
	leadCtx context.Context
	leadWG  sync.WaitGroup
}

// Server serves the API that the controller swaps whole (pkg/serve.Server).
type Server interface {
	API() *routes.API
	SetAPI(api *routes.API) error
}

// Config is what the controller is built from.
type Config struct {
	Server Server
	// Builtin is the API without CRDs; Handlers serve the custom resources.
	Builtin  *routes.API
	Handlers *handlers.API
	// Store is where custom resources are stored (etcd); CRDs where the CRDs are read (their watch
	// cache).
	Store, CRDs storage.Store
	Client      apiextensionsclient.CustomResourceDefinitionsGetter
	// Bootstrap are the CRDs of --api-config.
	Bootstrap []routes.CRD
	Logger    *slog.Logger
	// CachesChanged, when set, is called each time the served CRDs' watch caches (and the API with
	// them) changed.
	CachesChanged func()
}

// New returns the controller; Run serves the CRDs on every replica, Lead runs the cluster-wide half.
func New(cfg Config) *Controller {
	return &Controller{server: cfg.Server, builtin: cfg.Builtin, handlers: cfg.Handlers, store: cfg.Store, crds: cfg.CRDs, client: cfg.Client,
		bootstrap: cfg.Bootstrap, log: cfg.Logger.With("component", "crd-controller"), synced: make(chan struct{}),
		objs: map[string]*apiextensionsv1.CustomResourceDefinition{}, served: map[string]*servedCRD{},
		cleaning: map[string]bool{}, wake: make(chan struct{}, 1), cachesChanged: cfg.CachesChanged,
		statuses: make(chan *apiextensionsv1.CustomResourceDefinition, statusWriters), writing: map[string]bool{}}
}

// crdPrefix is where CRDs are stored.
var crdPrefix = storage.ResourcePrefix(apiextensionsv1.GroupName, "customresourcedefinitions", "")

type crdUpdate struct {
	reset   bool
	items   []storage.KeyValue
	deleted bool
}

// Run follows the CRDs until ctx ends, then stops every custom resource's watch cache and returns
// once they have stopped. Status writes and cleanups belong to Lead's terms, which wait for them.
func (c *Controller) Run(ctx context.Context) {
	updates := make(chan crdUpdate, 64)
	var reflector sync.WaitGroup
	reflector.Go(func() {
		storage.Reflect(ctx, c.crds, crdPrefix, func(reset bool, items []storage.KeyValue, deleted bool) bool {
			select {
			case updates <- crdUpdate{reset, items, deleted}:
				return true
			case <-ctx.Done():
				return false
			}
		}, c.log)
	})
	defer func() {
		reflector.Wait()
		for _, s := range c.served {
			s.stop()
			<-s.done
		}
	}()
	listed := false
	for {
		select {
		case <-ctx.Done():
			return
		case u := <-updates:
			c.apply(u)
			listed = listed || u.reset
		drain:
			for {
				select {
				case u := <-updates:
					c.apply(u)
					listed = listed || u.reset
				default:
					break drain
				}
			}
		case <-c.wake:
		}
		if !listed {
			continue
		}
		c.sync(ctx)
		c.syncMu.Lock()
		close(c.synced)
		c.synced = make(chan struct{})
		c.syncs++
		c.syncMu.Unlock()
	}
}

func (c *Controller) apply(u crdUpdate) {
	if u.reset {
		clear(c.objs)
	}
	for _, kv := range u.items {
		if u.deleted {
			delete(c.objs, kv.Key)
			continue
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := json.Unmarshal(kv.Value, crd); err != nil {
			c.log.Error("a stored CRD does not decode; it is not served", "key", kv.Key, "err", err)
			delete(c.objs, kv.Key)
			continue
		}
		crd.ResourceVersion = strconv.FormatInt(kv.ModRevision, 10)
		c.objs[kv.Key] = crd
	}
}

// sync serves the established CRDs. On the leader it first decides every CRD's names, and after
// serving stores the statuses that changed and starts the cleanup of deleted CRDs.
func (c *Controller) sync(ctx context.Context) {
	// The stored objects are shared with c.objs: a CRD is copied before its status is changed.
	crds := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(c.objs))
	for _, o := range c.objs {
		crds = append(crds, o)
	}
	leadCtx := c.leading()
	if leadCtx == nil {
		c.serve(ctx, crds)
		return
	}
	// The oldest CRD wins a name both want, whichever replica decides.
	slices.SortFunc(crds, func(a, b *apiextensionsv1.CustomResourceDefinition) int {
		if d := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); d != 0 {
			return d
		}
		return strings.Compare(a.Name, b.Name)
	})
	var changed []*apiextensionsv1.CustomResourceDefinition
	for i, crd := range crds {
		if !needsNaming(crd) {
			continue
		}
		crd = crd.DeepCopy()
		crds[i] = crd
		resources, kinds := c.builtin.Taken(crd.Spec.Group)
		taken := crdnames.Claimed(crds, crd.Spec.Group, crd.Name, crdnames.Taken{Resources: sets.New(resources...), Kinds: sets.New(kinds...)})
		if crdnames.Apply(crd, crdnames.Compute(crd, taken)) {
			changed = append(changed, crd)
		}
	}
	c.serve(ctx, crds)
	c.storeStatuses(leadCtx, changed)
	c.cleaningMu.Lock()
	defer c.cleaningMu.Unlock()
	for _, crd := range crds {
		if crd.DeletionTimestamp != nil && slices.Contains(crd.Finalizers, apiextensionsv1.CustomResourceCleanupFinalizer) && !c.cleaning[crd.Name] {
			var ext *handlers.Extension
			if s, ok := c.served[crd.Name]; ok {
				ext = s.ext
			}
			if c.goLead(func(ctx context.Context) { c.cleanup(ctx, crd, ext) }) {
				c.cleaning[crd.Name] = true
			}
		}
	}
}

// leading returns the current term's context while this replica holds the Lease, else nil.
func (c *Controller) leading() context.Context {
	c.leadMu.Lock()
	defer c.leadMu.Unlock()
	if c.leadCtx == nil || c.leadCtx.Err() != nil {
		return nil
	}
	return c.leadCtx
}

// goLead runs fn in the current term, which waits for it; false when this replica does not lead.
func (c *Controller) goLead(fn func(ctx context.Context)) bool {
	c.leadMu.Lock()
	defer c.leadMu.Unlock()
	if c.leadCtx == nil || c.leadCtx.Err() != nil {
		return false
	}
	ctx := c.leadCtx
	c.leadWG.Go(func() { fn(ctx) })
	return true
}

// Lead is the cluster-wide half, run under the controllers' Lease: until ctx ends, syncs decide names
// and conditions, their statuses are written, and deleted CRDs are cleaned up. It returns once its
// status writers and cleanups have stopped; the next term starts afresh.
func (c *Controller) Lead(ctx context.Context) {
	var writers sync.WaitGroup
	for range statusWriters {
		writers.Go(func() { c.writeStatuses(ctx) })
	}
	c.leadMu.Lock()
	c.leadCtx = ctx
	c.leadMu.Unlock()
	// Look again at every CRD: what the previous holder left undecided or uncleaned is this one's.
	c.wakeUp()
	<-ctx.Done()
	c.leadMu.Lock()
	c.leadCtx = nil // no cleanup starts after this, so the wait below is the last
	c.leadMu.Unlock()
	writers.Wait()
	c.leadWG.Wait()
	// Statuses queued but not written are decided again in the next term, from what is stored then.
	for {
		select {
		case <-c.statuses:
		default:
			c.writingMu.Lock()
			clear(c.writing)
			c.writingMu.Unlock()
			return
		}
	}
}

// wakeUp asks the run loop for a sync without blocking.
func (c *Controller) wakeUp() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// WaitServed returns once the controller has served what it first listed, and every bootstrap CRD.
func (c *Controller) WaitServed(ctx context.Context) error {
	for {
		// The first sync after the first list serves every stored CRD; the bootstrap ones may take
		// another, once their create comes back through the watch.
		c.syncMu.Lock()
		done, next := c.syncs > 0 && c.servesBootstrap(), c.synced
		c.syncMu.Unlock()
		if done {
			return nil
		}
		select {
		case <-next:
		case <-ctx.Done():
			return fmt.Errorf("waiting for the stored CRDs to be served: %w", ctx.Err())
		}
	}
}

// servesBootstrap reports whether the server serves every --api-config CRD.
func (c *Controller) servesBootstrap() bool {
	api := c.server.API()
	for _, def := range c.bootstrap {
		if _, ok := api.Resource(def.Definition.Spec.Group, servedVersion(def.Definition), def.Definition.Spec.Names.Plural); !ok {
			return false
		}
	}
	return true
}

func servedVersion(crd *apiextensionsv1.CustomResourceDefinition) string {
	for _, v := range crd.Spec.Versions {
		if v.Served {
			return v.Name
		}
	}
	return ""
}

// CreateBootstrap creates the CRDs of --api-config, or updates their spec where it differs, so that
// the manifests are served and visible through the API like any other CRD.
func (c *Controller) CreateBootstrap(ctx context.Context) error {
	var errs []error
	for _, def := range c.bootstrap {
		want := def.Definition.DeepCopy()
		want.Status = apiextensionsv1.CustomResourceDefinitionStatus{}
		_, err := c.client.CustomResourceDefinitions().Create(ctx, want, metav1.CreateOptions{FieldManager: "apictl-api-config"})
		if !apierrors.IsAlreadyExists(err) {
			if err != nil {
				errs = append(errs, fmt.Errorf("creating CRD %s from %s: %w", want.Name, def.File, err))
			}
			continue
		}
		cur, err := c.client.CustomResourceDefinitions().Get(ctx, want.Name, metav1.GetOptions{})
		if err != nil {
			errs = append(errs, fmt.Errorf("reading CRD %s: %w", want.Name, err))
			continue
		}
		if specEqual(cur.Spec, want.Spec) {
			continue
		}
		cur.Spec = want.Spec
		if _, err := c.client.CustomResourceDefinitions().Update(ctx, cur, metav1.UpdateOptions{FieldManager: "apictl-api-config"}); err != nil {
			errs = append(errs, fmt.Errorf("updating CRD %s from %s: %w", want.Name, def.File, err))
		}
	}
	return errors.Join(errs...)
}

func specEqual(a, b apiextensionsv1.CustomResourceDefinitionSpec) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}
