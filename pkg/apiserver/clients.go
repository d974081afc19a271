package apiserver

import (
	"context"
	"fmt"
	"net/http"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"

	"github.com/apictl/apictl/pkg/serve"
)

// clients are client-go clients and informers over the server's in-process mux, for the parts kube
// builds on client-go: the admission plugins, the aggregator's resolver and the APIService
// controllers. They see the live API (CRDs included) with its discovery, and watches stream.
type clients struct {
	kube      kubernetes.Interface
	dynamic   dynamic.Interface
	informers informers.SharedInformerFactory
	// mapper answers from the server's discovery; Reset it when a lookup misses, as kube's
	// deferred mapper is used.
	mapper meta.ResettableRESTMapper
}

// newClients builds the clients and adds the start-informers hook, which starts the informers the
// other hooks asked for once the watch caches are ready and waits for their first lists; /readyz waits
// for it. The informers stop with the server's context.
func newClients(s *serve.Server, caches *watchCaches, bg *background) (*clients, error) {
	c, err := buildClients(s.InProcess())
	if err != nil {
		return nil, err
	}
	err = s.AddPostStartHook("start-informers", func(ctx context.Context) error {
		if err := caches.waitReady(ctx); err != nil {
			return err
		}
		c.informers.Start(ctx.Done())
		bg.goRun(func() {
			<-ctx.Done()
			c.informers.Shutdown()
		})
		for typ, ok := range c.informers.WaitForCacheSync(ctx.Done()) {
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
	cfg := (&loopback{handler: handler}).config()
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("building the in-process client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("building the in-process dynamic client: %w", err)
	}
	return &clients{
		kube:      kube,
		dynamic:   dyn,
		informers: informers.NewSharedInformerFactory(kube, 0),
		mapper:    restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(kube.Discovery())),
	}, nil
}
