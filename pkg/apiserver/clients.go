package apiserver

import (
	"context"
	"fmt"
	"net/http"

	"k8s.io/apimachinery/pkg/api/meta"
	apiproxy "k8s.io/apiserver/pkg/util/proxy"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/restmapper"
	aggregatorclient "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"
	aggregatorinformers "k8s.io/kube-aggregator/pkg/client/informers/externalversions"

	"github.com/apictl/apictl/pkg/controllers/synced"
	"github.com/apictl/apictl/pkg/kinds"
	"github.com/apictl/apictl/pkg/resolver"
	"github.com/apictl/apictl/pkg/routes"
	"github.com/apictl/apictl/pkg/serve"
)

// clients are client-go clients and informers over the server's in-process mux, for the parts kube
// builds on client-go: the admission plugins, the aggregator and the APIService controllers. They see
// the live API (CRDs included) with its discovery, and watches stream. The service resolver and the
// APIService informers are made once, on the first ask, and shared by everyone who asks.
type clients struct {
	kube      kubernetes.Interface
	dynamic   dynamic.Interface
	metadata  metadata.Interface
	informers informers.SharedInformerFactory
	// mapper answers from the server's discovery; Reset it when a lookup misses, as kube's
	// deferred mapper is used.
	mapper meta.ResettableRESTMapper

	api      *routes.API
	loopback *loopback
	// Made by their accessors while New builds the server (one goroutine), read by hooks later.
	resolver      *resolver.Resolver
	resolverMade  bool
	aggregator    aggregatorclient.Interface
	apiServiceSet aggregatorinformers.SharedInformerFactory
}

// newClients builds the clients of the server's API and adds the start-informers hook, which starts
// the informers the other hooks asked for once the watch caches are ready and waits for their first
// lists; /readyz waits for it. The informers stop with the server's context.
func newClients(s *serve.Server, api *routes.API, caches *watchCaches, bg *background) (*clients, error) {
	c, err := buildClients(s.InProcess())
	if err != nil {
		return nil, err
	}
	c.api = api
	err = s.AddPostStartHook("start-informers", func(ctx context.Context) error {
		if err := caches.waitReady(ctx); err != nil {
			return err
		}
		c.informers.Start(ctx.Done())
		if c.apiServiceSet != nil {
			c.apiServiceSet.Start(ctx.Done())
		}
		bg.goRun(func() {
			<-ctx.Done()
			c.informers.Shutdown()
			if c.apiServiceSet != nil {
				c.apiServiceSet.Shutdown()
			}
		})
		for typ, ok := range synced.WaitFactory(ctx, c.informers) {
			if !ok {
				return fmt.Errorf("the %v informer did not sync: %w", typ, ctx.Err())
			}
		}
		return nil
	})
	return c, err
}

// buildClients makes the clients of handler, a server's in-process mux.
func buildClients(handler http.Handler) (*clients, error) {
	l := &loopback{handler: handler}
	cfg := l.config()
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("building the in-process client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("building the in-process dynamic client: %w", err)
	}
	meta, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("building the in-process metadata client: %w", err)
	}
	return &clients{
		kube:      kube,
		dynamic:   dyn,
		metadata:  meta,
		informers: informers.NewSharedInformerFactory(kube, 0),
		mapper:    restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(kube.Discovery())),
		loopback:  l,
	}, nil
}

// serviceResolver is the resolver of service references that the aggregator's proxy, the
// APIServices' availability checks and the webhook clients share: by the services and
// EndpointSlices of the in-process informers. It asks for those informers, so call it while New
// builds the server, before the start-informers hook runs. Nil when the API does not serve
// services; without EndpointSlices only ExternalName services resolve.
func (c *clients) serviceResolver() (*resolver.Resolver, error) {
	if c.resolverMade {
		return c.resolver, nil
	}
	if _, ok := c.api.Resource(routes.GroupCore, "v1", "services"); !ok {
		c.resolverMade = true
		return nil, nil
	}
	services := c.informers.Core().V1().Services()
	services.Informer()
	var slices apiproxy.EndpointSliceGetter
	if _, ok := c.api.Resource("discovery.k8s.io", "v1", "endpointslices"); ok {
		var err error
		if slices, err = apiproxy.NewEndpointSliceIndexerGetter(c.informers.Discovery().V1().EndpointSlices()); err != nil {
			return nil, fmt.Errorf("indexing EndpointSlices by service: %w", err)
		}
	}
	c.resolver, c.resolverMade = resolver.New(services.Lister(), slices), true
	return c.resolver, nil
}

// apiServices are the in-process APIService client and the informer factory that the aggregator
// and the APIService controllers share, so that one informer lists and watches APIServices for all
// of them. Call it while New builds the server: the start-informers hook starts the factory (a
// hook that needs it sooner may Start it too) and shuts it down with the server.
func (c *clients) apiServices() (aggregatorclient.Interface, aggregatorinformers.SharedInformerFactory, error) {
	if c.apiServiceSet == nil {
		client, err := aggregatorclient.NewForConfig(c.loopback.config())
		if err != nil {
			return nil, nil, fmt.Errorf("building the in-process APIService client: %w", err)
		}
		c.aggregator, c.apiServiceSet = client, aggregatorinformers.NewSharedInformerFactory(client, 0)
	}
	return c.aggregator, c.apiServiceSet, nil
}

// kindsControllerContext is what a kind's controller is built from (kinds.ControllerContext).
func kindsControllerContext(cfg *serve.Config, cl *clients, name string, signing kinds.Signing) kinds.ControllerContext {
	return kinds.ControllerContext{Client: cl.kube, Dynamic: cl.dynamic, Metadata: cl.metadata, Informers: cl.informers,
		Logger: cfg.Logger.With("controller", name), Signing: signing}
}
