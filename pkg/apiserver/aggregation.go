package apiserver

import (
	"context"
	"fmt"
	"os"

	apiproxy "k8s.io/apiserver/pkg/util/proxy"
	aggregatorclient "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"
	aggregatorinformers "k8s.io/kube-aggregator/pkg/client/informers/externalversions"

	"github.com/apictl/apictl/pkg/aggregator"
	"github.com/apictl/apictl/pkg/certs"
	"github.com/apictl/apictl/pkg/flags"
	"github.com/apictl/apictl/pkg/resolver"
	"github.com/apictl/apictl/pkg/routes"
	"github.com/apictl/apictl/pkg/serve"
)

// newServiceResolver is the resolver of service references that the aggregator's proxy and the
// webhook clients share: by the services and EndpointSlices of the in-process informers. It asks
// for those informers, so call it before the start-informers hook runs (while building the server).
// Nil when the API does not serve services; without EndpointSlices only ExternalName services
// resolve.
func newServiceResolver(api *routes.API, cl *clients) (*resolver.Resolver, error) {
	if _, ok := api.Resource(routes.GroupCore, "v1", "services"); !ok {
		return nil, nil
	}
	services := cl.informers.Core().V1().Services()
	services.Informer()
	var slices apiproxy.EndpointSliceGetter
	if _, ok := api.Resource("discovery.k8s.io", "v1", "endpointslices"); ok {
		var err error
		if slices, err = apiproxy.NewEndpointSliceIndexerGetter(cl.informers.Discovery().V1().EndpointSlices()); err != nil {
			return nil, fmt.Errorf("indexing EndpointSlices by service: %w", err)
		}
	}
	return resolver.New(services.Lister(), slices), nil
}

// addAggregation runs kube's aggregator for the server: APIServices with a service are proxied to
// it with the front-proxy client pair of the bootstrapped PKI, and their discovery and OpenAPI merge
// into the server's. Its post-start hook, named as kube's, finishes once every APIService listed at
// start has its proxy. Without the APIService API or services there is nothing to do.
func addAggregation(s *serve.Server, cfg *serve.Config, o *flags.ServerOptions, cl *clients, bg *background) error {
	if _, ok := cfg.API.Resource(routes.GroupAPIRegistration, "v1", "apiservices"); !ok {
		return nil
	}
	res, err := newServiceResolver(cfg.API, cl)
	if err != nil || res == nil {
		return err
	}
	client, err := aggregatorclient.NewForConfig((&loopback{handler: s.InProcess()}).config())
	if err != nil {
		return fmt.Errorf("building the in-process APIService client: %w", err)
	}
	factory := aggregatorinformers.NewSharedInformerFactory(client, 0)
	certFile, keyFile := proxyClientPair(o)
	ctrl, err := aggregator.New(aggregator.Config{
		APIServices:         factory.Apiregistration().V1().APIServices(),
		Resolver:            res,
		ProxyClientCertFile: certFile,
		ProxyClientKeyFile:  keyFile,
		Target:              s,
		Logger:              cfg.Logger,
	})
	if err != nil {
		return err
	}
	return s.AddPostStartHook("apiservice-registration-controller", func(ctx context.Context) error {
		factory.Start(ctx.Done())
		bg.goRun(func() {
			<-ctx.Done()
			factory.Shutdown()
		})
		if err := ctrl.Start(ctx); err != nil {
			return err
		}
		bg.goRun(func() { ctrl.Run(ctx) })
		return nil
	})
}

// proxyClientPair is the front-proxy client pair of the PKI apictl bootstrapped in --cert-dir, the
// one its request-header authentication trusts by default; empty when there is none (serving
// certificates given by flags).
func proxyClientPair(o *flags.ServerOptions) (certFile, keyFile string) {
	dir := o.SecureServing.CertDir
	if dir == "" || o.SecureServing.CertFile != "" {
		return "", ""
	}
	certFile, keyFile = certs.CertPath(dir, certs.NameFrontProxyClient), certs.KeyPath(dir, certs.NameFrontProxyClient)
	if _, err := os.Stat(certFile); err != nil {
		return "", ""
	}
	return certFile, keyFile
}
