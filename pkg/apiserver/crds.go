package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	apiextensionshelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset/typed/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/apictl/apictl/pkg/controllers/crdnames"
	"github.com/apictl/apictl/pkg/registry/crschema"
	"github.com/apictl/apictl/pkg/routes"
	"github.com/apictl/apictl/pkg/serve"
	"github.com/apictl/apictl/pkg/serve/handlers"
	"github.com/apictl/apictl/pkg/storage"
	"github.com/apictl/apictl/pkg/storage/cacher"
)

// crdController turns the CustomResourceDefinitions stored in the cluster into served APIs, on every
// replica: it follows the CRDs' watch, builds the handlers and watch cache of each established CRD
// once per change of it, and swaps the server's API and the handlers' custom resources whole. On the
// replica that holds the controllers' Lease (lead) it also decides the accepted names and conditions
// (crdnames), serves what it decided at once, stores it, and deletes a deleted CRD's instances before
// letting it go; the other replicas serve what is stored, so that every replica serves the names the
// leader wrote and a deleted CRD is cleaned up once. What kube splits into its naming, establishing,
// finalizer and API-serving controllers is one loop here, so that a batch of changes costs one swap.
type crdController struct {
	server    *serve.Server
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
	// cachesChanged, when set, is told each time caches (and the API) changed: the garbage
	// collector follows custom resources through it.
	cachesChanged *changes

	statuses  chan *apiextensionsv1.CustomResourceDefinition
	writingMu sync.Mutex
	writing   map[string]bool // name@resourceVersion of the statuses being written

	// leadCtx is the context of the current term while this replica holds the Lease, else nil;
	// leadWG counts the cleanups started in the term, which the term waits for.
	leadMu  sync.Mutex
	leadCtx context.Context
	leadWG  sync.WaitGroup
}

// servedCRD is one CRD as served: what it was built from, and its handlers and watch cache.
type servedCRD struct {
	key         string // its UID, generation and accepted names: a change rebuilds it and ends its watches
	terminating bool
	crd         routes.CRD
	ext         *handlers.Extension
	cache       *cacher.Cacher
	stop        context.CancelFunc
	done        chan struct{}
}

func newCRDController(server *serve.Server, builtin *routes.API, h *handlers.API, store, crds storage.Store,
	client apiextensionsclient.CustomResourceDefinitionsGetter, bootstrap []routes.CRD, log *slog.Logger) *crdController {
	return &crdController{server: server, builtin: builtin, handlers: h, store: store, crds: crds, client: client,
		bootstrap: bootstrap, log: log.With("component", "crd-controller"), synced: make(chan struct{}),
		objs: map[string]*apiextensionsv1.CustomResourceDefinition{}, served: map[string]*servedCRD{},
		cleaning: map[string]bool{}, wake: make(chan struct{}, 1),
		statuses: make(chan *apiextensionsv1.CustomResourceDefinition, statusWriters), writing: map[string]bool{}}
}

// crdPrefix is where CRDs are stored.
var crdPrefix = storage.ResourcePrefix(apiextensionsv1.GroupName, "customresourcedefinitions", "")

type crdUpdate struct {
	reset   bool
	items   []storage.KeyValue
	deleted bool
}

// run follows the CRDs until ctx ends, then stops every custom resource's watch cache and returns
// once they have stopped. Status writes and cleanups belong to lead's terms, which wait for them.
func (c *crdController) run(ctx context.Context) {
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

func (c *crdController) apply(u crdUpdate) {
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
func (c *crdController) sync(ctx context.Context) {
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
func (c *crdController) leading() context.Context {
	c.leadMu.Lock()
	defer c.leadMu.Unlock()
	if c.leadCtx == nil || c.leadCtx.Err() != nil {
		return nil
	}
	return c.leadCtx
}

// goLead runs fn in the current term, which waits for it; false when this replica does not lead.
func (c *crdController) goLead(fn func(ctx context.Context)) bool {
	c.leadMu.Lock()
	defer c.leadMu.Unlock()
	if c.leadCtx == nil || c.leadCtx.Err() != nil {
		return false
	}
	ctx := c.leadCtx
	c.leadWG.Go(func() { fn(ctx) })
	return true
}

// lead is the cluster-wide half, run under the controllers' Lease: until ctx ends, syncs decide names
// and conditions, their statuses are written, and deleted CRDs are cleaned up. It returns once its
// status writers and cleanups have stopped; the next term starts afresh.
func (c *crdController) lead(ctx context.Context) {
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
func (c *crdController) wakeUp() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// statusWriters bounds the status writes in flight: etcd commits concurrent writes in shared
// fsyncs, so a burst of new CRDs is Established in a few commits rather than one after another.
const statusWriters = 16

// storeStatuses hands the statuses sync decided to the writers, so that the next batch of CRDs is
// served while these are stored. A status already being written from the same resourceVersion is
// not written twice.
func (c *crdController) storeStatuses(ctx context.Context, crds []*apiextensionsv1.CustomResourceDefinition) {
	for _, crd := range crds {
		key := crd.Name + "@" + crd.ResourceVersion
		c.writingMu.Lock()
		dup := c.writing[key]
		c.writing[key] = true
		c.writingMu.Unlock()
		if dup {
			continue
		}
		select {
		case c.statuses <- crd:
		case <-ctx.Done():
			// The term ended: the next one decides this status again and must not find it taken.
			c.writingMu.Lock()
			delete(c.writing, key)
			c.writingMu.Unlock()
			return
		}
	}
}

// writeStatuses stores statuses until ctx ends.
func (c *crdController) writeStatuses(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case crd := <-c.statuses:
			_, err := c.client.CustomResourceDefinitions().UpdateStatus(ctx, crd, metav1.UpdateOptions{})
			if err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) && ctx.Err() == nil {
				// A conflict or a delete comes back through the watch, and so does the next try.
				c.log.Warn("storing a CRD's status failed", "crd", crd.Name, "err", err)
			}
			c.writingMu.Lock()
			delete(c.writing, crd.Name+"@"+crd.ResourceVersion)
			c.writingMu.Unlock()
		}
	}
}

// needsNaming reports whether kube's naming controller would look at crd: its names are not all
// accepted yet, or its conditions were never set.
func needsNaming(crd *apiextensionsv1.CustomResourceDefinition) bool {
	return !crdnames.NamesEqual(crd.Spec.Names, crd.Status.AcceptedNames) ||
		apiextensionshelpers.FindCRDCondition(crd, apiextensionsv1.NamesAccepted) == nil ||
		apiextensionshelpers.FindCRDCondition(crd, apiextensionsv1.Established) == nil
}

// serve makes the CRDs whose names are accepted what the server serves, reusing the handlers and
// watch cache of every CRD that did not change, then stops those of the CRDs that went or changed.
func (c *crdController) serve(ctx context.Context, crds []*apiextensionsv1.CustomResourceDefinition) {
	var accepted []*apiextensionsv1.CustomResourceDefinition
	for _, crd := range crds {
		if apiextensionshelpers.IsCRDConditionTrue(crd, apiextensionsv1.NamesAccepted) || apiextensionshelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established) {
			accepted = append(accepted, crd)
		}
	}
	// Building a CRD's handlers compiles its schemas and CEL rules (a second or more for the biggest
	// CRDs operators ship): new ones are built on every core at once.
	built := make([]*servedCRD, len(accepted))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, crd := range accepted {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			s, err := c.served1(ctx, crd)
			if err != nil {
				c.log.Error("a CRD cannot be served", "crd", crd.Name, "err", err)
				return
			}
			built[i] = s
		})
	}
	wg.Wait()
	next := map[string]*servedCRD{}
	var defs []routes.CRD
	for _, s := range built {
		if s != nil {
			next[s.crd.Definition.Name] = s
			defs = append(defs, s.crd)
		}
	}
	if sameServing(c.served, next) {
		return // only statuses changed: the API is the same
	}
	api, err := c.builtin.WithCRDs(defs)
	if err != nil {
		// A CRD the API refuses (one in a built-in group) is left out; the others are served.
		c.log.Error("some CRDs cannot be served", "err", err)
	}
	exts := make([]*handlers.Extension, 0, len(next))
	for _, s := range next {
		exts = append(exts, s.ext)
	}
	// Handlers first: a route never points at a resource the handlers do not know yet.
	c.handlers.SetExtensions(exts)
	if err := c.server.SetAPI(api); err != nil {
		c.log.Error("installing the API failed", "err", err)
	}
	for name, s := range c.served {
		if n, ok := next[name]; !ok || n.cache != s.cache {
			s.stop() // ends the resource's watches: clients list again and see the new API
			<-s.done
		}
	}
	c.served = next
	caches := make(map[schema.GroupResource]*cacher.Cacher, len(next))
	for _, s := range next {
		d := s.crd.Definition
		caches[schema.GroupResource{Group: d.Spec.Group, Resource: d.Spec.Names.Plural}] = s.cache
	}
	c.cachesMu.Lock()
	c.caches = caches
	c.cachesMu.Unlock()
	if c.cachesChanged != nil {
		c.cachesChanged.notify()
	}
}

// watchCaches returns the served CRDs' watch caches.
func (c *crdController) watchCaches() map[schema.GroupResource]*cacher.Cacher {
	c.cachesMu.Lock()
	defer c.cachesMu.Unlock()
	return c.caches
}

func sameServing(a, b map[string]*servedCRD) bool {
	if len(a) != len(b) {
		return false
	}
	for name, s := range a {
		if b[name] != s {
			return false
		}
	}
	return true
}

// served1 returns how crd is served: as it was when nothing it is built from changed, else newly
// built (a new watch cache only when the resource's storage or schema changed).
func (c *crdController) served1(ctx context.Context, in *apiextensionsv1.CustomResourceDefinition) (*servedCRD, error) {
	// The spec changes only with the generation; the names served are the accepted ones. Nothing is
	// copied until the key says the CRD changed: most syncs change no served CRD.
	names, err := json.Marshal(in.Status.AcceptedNames)
	if err != nil {
		return nil, err
	}
	key := string(in.UID) + "/" + strconv.FormatInt(in.Generation, 10) + "/" + string(names)
	terminating := in.DeletionTimestamp != nil || apiextensionshelpers.IsCRDConditionTrue(in, apiextensionsv1.Terminating)
	old := c.served[in.Name]
	if old != nil && old.key == key && old.terminating == terminating {
		return old, nil
	}
	crd := in.DeepCopy()
	crd.Spec.Names = crd.Status.AcceptedNames // kube serves the accepted names
	if len(crd.Spec.Names.ShortNames) == 0 {
		crd.Spec.Names.ShortNames = nil
	}
	def := routes.CRD{File: "customresourcedefinition " + crd.Name, Item: -1, Definition: crd}
	one, err := routes.Empty().WithCRDs([]routes.CRD{def})
	if err != nil {
		return nil, err
	}
	set, err := crschema.NewSet([]routes.CRD{def})
	if err != nil {
		return nil, err
	}
	s := &servedCRD{key: key, terminating: terminating, crd: def}
	if old != nil && old.key == key {
		s.cache, s.stop, s.done = old.cache, old.stop, old.done
	} else {
		// The watch cache reads objects with their schema's defaults, as kube's decoder gives them
		// to every read: a default added to the CRD shows in objects written before it.
		store := c.store
		if defaults := set.DefaultsOnRead(); defaults != nil {
			store = storage.WithReadTransform(store, defaults)
		}
		if err := c.startCache(ctx, s, crd, store); err != nil {
			return nil, err
		}
	}
	s.ext, err = c.handlers.NewExtension(handlers.ExtensionConfig{API: one, Store: s.cache, CustomResources: set, Terminating: terminating, CRD: crd})
	if err != nil {
		if s.cache != oldCache(old) {
			s.stop()
			<-s.done
		}
		return nil, err
	}
	return s, nil
}

func oldCache(old *servedCRD) *cacher.Cacher {
	if old == nil {
		return nil
	}
	return old.cache
}

// startCache starts the watch cache of crd's resource. The CRD is served at once, as kube's
// apiextensions-apiserver serves it: until the cache holds its first list, gets and paged lists go
// to etcd and the rest waits for it a few seconds (cacher.List), which for a new CRD is
// milliseconds; a CRD with a million objects in etcd does not hold /readyz back while they are read.
func (c *crdController) startCache(ctx context.Context, s *servedCRD, crd *apiextensionsv1.CustomResourceDefinition, store storage.Store) error {
	gr := crd.Spec.Group + "/" + crd.Spec.Names.Plural
	cache, err := cacher.New(store, storage.ResourcePrefix(crd.Spec.Group, crd.Spec.Names.Plural, ""),
		cacher.Config{Logger: c.log.With("component", "watch-cache", "resource", gr)})
	if err != nil {
		return fmt.Errorf("creating the watch cache of %s: %w", gr, err)
	}
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := cache.Run(cctx); err != nil && cctx.Err() == nil {
			c.log.Error("a watch cache stopped", "resource", gr, "err", err)
		}
	}()
	s.cache, s.stop, s.done = cache, cancel, done
	return nil
}

// cleanup is kube's CRD finalizer: it deletes every instance of a deleted CRD (objects with
// finalizers are marked and waited for), then removes the cleanup finalizer, which lets the CRD go.
func (c *crdController) cleanup(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, ext *handlers.Extension) {
	defer c.cleaningDone(crd.Name)
	cond := apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.Terminating, Status: apiextensionsv1.ConditionFalse,
		Reason: "NeverEstablished", Message: "resource was never established"}
	if ext != nil {
		c.setCondition(ctx, crd.Name, apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.Terminating,
			Status: apiextensionsv1.ConditionTrue, Reason: "InstanceDeletionInProgress", Message: "CustomResource deletion is in progress"})
		cond = c.deleteInstances(ctx, ext)
		if cond.Status == apiextensionsv1.ConditionTrue {
			c.setCondition(ctx, crd.Name, cond)
			select { // then the next sync tries again
			case <-time.After(time.Second):
			case <-ctx.Done():
			}
			return
		}
	}
	c.setCondition(ctx, crd.Name, cond)
	for attempt := 0; attempt < 5 && ctx.Err() == nil; attempt++ {
		cur, err := c.client.CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return
		}
		if err != nil {
			c.log.Warn("reading a deleted CRD failed", "crd", crd.Name, "err", err)
			return
		}
		cur.Finalizers = slices.DeleteFunc(cur.Finalizers, func(f string) bool { return f == apiextensionsv1.CustomResourceCleanupFinalizer })
		_, err = c.client.CustomResourceDefinitions().Update(ctx, cur, metav1.UpdateOptions{})
		if err == nil || apierrors.IsNotFound(err) {
			c.log.Info("CRD instances deleted; CRD released", "crd", crd.Name)
			return
		}
		if !apierrors.IsConflict(err) {
			c.log.Warn("removing a CRD's cleanup finalizer failed", "crd", crd.Name, "err", err)
			return
		}
	}
}

// cleaningDone lets the next sync start the cleanup of name again, if it is still needed.
func (c *crdController) cleaningDone(name string) {
	c.cleaningMu.Lock()
	delete(c.cleaning, name)
	c.cleaningMu.Unlock()
	c.wakeUp()
}

// deleteInstances deletes every instance and waits until none is left, with kube's conditions.
func (c *crdController) deleteInstances(ctx context.Context, ext *handlers.Extension) apiextensionsv1.CustomResourceDefinitionCondition {
	wait := 50 * time.Millisecond
	for {
		left, err := ext.DeleteAll(ctx)
		if err != nil {
			return apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.Terminating, Status: apiextensionsv1.ConditionTrue,
				Reason: "InstanceDeletionFailed", Message: fmt.Sprintf("could not issue all deletes: %v", err)}
		}
		if left == 0 {
			return apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.Terminating, Status: apiextensionsv1.ConditionFalse,
				Reason: "InstanceDeletionCompleted", Message: "removed all instances"}
		}
		select {
		case <-ctx.Done():
			return apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.Terminating, Status: apiextensionsv1.ConditionTrue,
				Reason: "InstanceDeletionCheck", Message: fmt.Sprintf("could not confirm zero CustomResources remaining: %v", ctx.Err())}
		case <-time.After(wait):
			wait = min(2*wait, 5*time.Second)
		}
	}
}

// setCondition stores one condition of a CRD's status.
func (c *crdController) setCondition(ctx context.Context, name string, cond apiextensionsv1.CustomResourceDefinitionCondition) {
	for attempt := 0; attempt < 5 && ctx.Err() == nil; attempt++ {
		cur, err := c.client.CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return
		}
		crdnames.SetCondition(cur, cond)
		_, err = c.client.CustomResourceDefinitions().UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		if !apierrors.IsConflict(err) {
			return
		}
	}
}

// createBootstrap creates the CRDs of --api-config, or updates their spec where it differs, so that
// the manifests are served and visible through the API like any other CRD.
func (c *crdController) createBootstrap(ctx context.Context) error {
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

// addCRDHooks runs the CRD controller with the server, in kube's start-apiextensions-controllers
// and crd-informer-synced hooks: the hook creates the --api-config CRDs and finishes, turning
// /readyz green, once every stored CRD is served. Serving runs on every replica; deciding and storing
// names and conditions, and cleaning up deleted CRDs, once per cluster under the Lease (ctrls). A
// replica that does not lead is ready once the leader has established the --api-config CRDs (within
// a lease duration of a leader's death, when another replica takes over).
func (a *assembly) addCRDHooks() error {
	s, cfg, rest, caches, store, bootstrap, bg, ctrls := a.server, a.cfg, a.rest, a.caches, a.st.store, a.crds, &a.bg, &a.ctrls
	crdStore, ok := caches.byResource[apiextensionsv1.Resource("customresourcedefinitions")]
	if !ok {
		if len(bootstrap) > 0 {
			return errors.New("--api-config needs the apiextensions.k8s.io/v1 API, which serves the CRDs: do not turn it off in --runtime-config")
		}
		return nil
	}
	lb, err := newLoopback(cfg.API, rest)
	if err != nil {
		return fmt.Errorf("building the loopback client: %w", err)
	}
	client, err := apiextensionsclient.NewForConfig(lb.config())
	if err != nil {
		return fmt.Errorf("building the loopback client: %w", err)
	}
	c := newCRDController(s, cfg.API, rest, store, crdStore, client, bootstrap, cfg.Logger)
	list := c.watchCaches
	c.cachesChanged = &caches.customChanged
	caches.custom.Store(&list)
	ctrls.add("crd-status-and-cleanup-controller", c.lead)
	return s.AddPostStartHook("start-apiextensions-controllers", func(ctx context.Context) error {
		bg.goRun(func() { c.run(ctx) })
		if err := c.createBootstrap(ctx); err != nil {
			return fmt.Errorf("installing the --api-config CRDs: %w", err)
		}
		return c.waitServed(ctx)
	})
}

// waitServed returns once the controller has served what it first listed, and every bootstrap CRD.
func (c *crdController) waitServed(ctx context.Context) error {
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
func (c *crdController) servesBootstrap() bool {
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
