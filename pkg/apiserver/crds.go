package apiserver

import (
	"context"
	"errors"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset/typed/apiextensions/v1"

	"github.com/apictl/apictl/pkg/controllers/crds"
)

// addCRDHooks runs the CRD controller with the server, in kube's start-apiextensions-controllers
// and crd-informer-synced hooks: the hook creates the --api-config CRDs and finishes, turning
// /readyz green, once every stored CRD is served. Serving runs on every replica; deciding and storing
// names and conditions, and cleaning up deleted CRDs, once per cluster under the Lease (ctrls). The
// controller is pkg/controllers/crds. A
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
	c := crds.New(crds.Config{Server: s, Builtin: cfg.API, Handlers: rest, Store: store, CRDs: crdStore, Client: client,
		Bootstrap: bootstrap, Logger: cfg.Logger, CachesChanged: caches.customChanged.notify})
	list := c.WatchCaches
	caches.custom.Store(&list)
	ctrls.add("crd-status-and-cleanup-controller", c.Lead)
	return s.AddPostStartHook("start-apiextensions-controllers", func(ctx context.Context) error {
		bg.goRun(func() { c.Run(ctx) })
		if err := c.CreateBootstrap(ctx); err != nil {
			return fmt.Errorf("installing the --api-config CRDs: %w", err)
		}
		return c.WaitServed(ctx)
	})
}
