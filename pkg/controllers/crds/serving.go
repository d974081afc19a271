package crds

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strconv"
	"sync"

	apiextensionshelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apictl/apictl/pkg/registry/crschema"
	"github.com/apictl/apictl/pkg/routes"
	"github.com/apictl/apictl/pkg/serve/handlers"
	"github.com/apictl/apictl/pkg/storage"
	"github.com/apictl/apictl/pkg/storage/cacher"
)

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

// serve makes the CRDs whose names are accepted what the server serves, reusing the handlers and
// watch cache of every CRD that did not change, then stops those of the CRDs that went or changed.
func (c *Controller) serve(ctx context.Context, crds []*apiextensionsv1.CustomResourceDefinition) {
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
			s, err := c.build(ctx, crd)
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
		c.cachesChanged()
	}
}

// WatchCaches returns the served CRDs' watch caches.
func (c *Controller) WatchCaches() map[schema.GroupResource]*cacher.Cacher {
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

// build returns how crd is served: as it was when nothing it is built from changed, else newly
// built (a new watch cache only when the resource's storage or schema changed).
func (c *Controller) build(ctx context.Context, in *apiextensionsv1.CustomResourceDefinition) (*servedCRD, error) {
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
func (c *Controller) startCache(ctx context.Context, s *servedCRD, crd *apiextensionsv1.CustomResourceDefinition, store storage.Store) error {
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
