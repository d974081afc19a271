package apiserver

import (
	"context"
	"os"

	"github.com/apictl/apictl/pkg/aggregator"
	"github.com/apictl/apictl/pkg/certs"
	"github.com/apictl/apictl/pkg/flags"
	"github.com/apictl/apictl/pkg/routes"
)

// addAggregation runs kube's aggregator for the server: APIServices with a service are proxied to
// it with the front-proxy client pair of the bootstrapped PKI, and their discovery and OpenAPI merge
// into the server's. Its post-start hook, named as kube's, finishes once every APIService listed at
// start has its proxy. Without the APIService API or services there is nothing to do.
func (a *assembly) addAggregation() error {
	s, cfg, o, cl, bg := a.server, a.cfg, a.o, a.cl, &a.bg
	if _, ok := cfg.API.Resource(routes.GroupAPIRegistration, "v1", "apiservices"); !ok {
		return nil
	}
	res, err := cl.serviceResolver()
	if err != nil || res == nil {
		return err
	}
	_, factory, err := cl.apiServices()
	if err != nil {
		return err
	}
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
		// Shared with the APIService controllers; Start runs it now if no one else has yet, and the
		// start-informers hook shuts it down.
		factory.Start(ctx.Done())
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
