package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"

	crdclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	crdinformers "k8s.io/apiextensions-apiserver/pkg/client/informers/externalversions"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	aggregatorclient "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"
	aggregatorinformers "k8s.io/kube-aggregator/pkg/client/informers/externalversions"
	apiregistrationinformers "k8s.io/kube-aggregator/pkg/client/informers/externalversions/apiregistration/v1"

	"github.com/apictl/apictl/pkg/controllers/apiserviceavailable"
	"github.com/apictl/apictl/pkg/controllers/autoregister"
	"github.com/apictl/apictl/pkg/controllers/extensionauth"
	"github.com/apictl/apictl/pkg/features"
	"github.com/apictl/apictl/pkg/routes"
	"github.com/apictl/apictl/pkg/serve"
	"github.com/apictl/apictl/pkg/serve/healthz"
)

// addAPIServiceHooks starts kube-apiserver's APIService controllers and the publisher of the
// extension-apiserver-authentication ConfigMap, each under kube's post-start hook name:
//   - kube-apiserver-autoregistration: a Local APIService for every built-in group version (once, at
//     start) and for every CRD group version (as CRDs come and go); /readyz waits, as kube's
//     autoregister-completion check does, until the built-in ones have been seen Available;
//   - apiservice-status-available-controller: the Available condition of the local APIServices,
//     kube's local availability controller, on every replica as in kube (so that a replica's
//     readiness never waits for another); the remote ones' (kube's remote availability controller)
//     once per cluster under the Lease (ctrls), as their checks reach the network and replicas
//     would otherwise write what each of them sees in turn;
//   - start-cluster-authentication-info-controller: the client CA and request-header settings for
//     extension API servers.
//
// Controllers read through informers over the in-process API and stop with the server's context.
func (a *assembly) addAPIServiceHooks() error {
	return errors.Join(a.addExtensionAuthHook(), a.addAPIServiceControllers())
}

// servesV1 reports whether the built-in API serves the v1 resource of the group.
func servesV1(api *routes.API, group, resource string) bool {
	_, ok := api.Resource(group, "v1", resource)
	return ok
}

func (a *assembly) addExtensionAuthHook() error {
	s, cfg, o, cl, bg := a.server, a.cfg, a.o, a.cl, &a.bg
	if !servesV1(cfg.API, routes.GroupCore, "configmaps") || !servesV1(cfg.API, routes.GroupCore, "namespaces") {
		return nil
	}
	rh := o.Authentication.RequestHeader.Effective()
	required := func() extensionauth.Info {
		info := extensionauth.Info{UsernameHeaders: rh.UsernameHeaders, UIDHeaders: rh.UIDHeaders, GroupHeaders: rh.GroupHeaders,
			ExtraHeaderPrefixes: rh.ExtraHeaderPrefixes, AllowedNames: rh.AllowedNames}
		// What the secure port trusts, as last loaded from disk.
		if sec := cfg.SecureServing; sec != nil {
			if sec.ClientCA != nil {
				info.ClientCA = sec.ClientCA.PEM()
			}
			if sec.RequestHeaderCA != nil {
				info.RequestHeaderCA = sec.RequestHeaderCA.PEM()
			}
		}
		return info
	}
	ctrl, err := extensionauth.New(extensionauth.Config{Client: cl.kube, Required: required,
		WithUID: cfg.FeatureGates.Enabled(features.RemoteRequestHeaderUID), Logger: cfg.Logger})
	if err != nil {
		return err
	}
	return s.AddPostStartHook("start-cluster-authentication-info-controller", func(ctx context.Context) error {
		bg.goRun(func() { ctrl.Run(ctx) })
		return nil
	})
}

func (a *assembly) addAPIServiceControllers() error {
	if !servesV1(a.cfg.API, routes.GroupAPIRegistration, "apiservices") {
		return nil
	}
	// The APIService informer is the aggregator's too.
	client, factory, err := a.cl.apiServices()
	if err != nil {
		return err
	}
	apiServices := factory.Apiregistration().V1().APIServices()
	builtin := autoregister.Builtin(a.cfg.API.GroupVersions())
	auto, err := a.newAutoregistration(client, factory, builtin)
	if err != nil {
		return err
	}
	avail, done, err := a.addAPIServiceAvailability(client, apiServices, builtin)
	if err != nil {
		return err
	}
	bg := &a.bg
	return errors.Join(
		a.server.AddPostStartHook("kube-apiserver-autoregistration", func(ctx context.Context) error {
			auto.start(ctx, bg)
			return nil
		}),
		a.server.AddPostStartHook("apiservice-status-available-controller", func(ctx context.Context) error {
			if avail == nil {
				return nil
			}
			bg.goRun(func() { avail.Run(ctx, 5) })
			// The server says it is ready (and tests go on) once /readyz passes, and
			// autoregister-completion is one of its checks: wait for the built-in APIServices too.
			select {
			case <-done.Done():
				return nil
			case <-ctx.Done():
				return fmt.Errorf("waiting for the built-in APIServices to be available: %w", ctx.Err())
			}
		}),
	)
}

// autoregistration is kube's autoregister controller with the informers it reads: the APIServices',
// and the CRDs' when the API serves them.
type autoregistration struct {
	reg        *autoregister.Controller
	factory    aggregatorinformers.SharedInformerFactory
	crds       *autoregister.CRDs
	crdFactory crdinformers.SharedInformerFactory
}

// newAutoregistration builds the controller that keeps a Local APIService for every built-in and
// CRD group version.
func (a *assembly) newAutoregistration(client aggregatorclient.Interface, factory aggregatorinformers.SharedInformerFactory, builtin []*apiregistrationv1.APIService) (*autoregistration, error) {
	cfg := a.cfg
	reg, err := autoregister.New(factory.Apiregistration().V1().APIServices(), client.ApiregistrationV1(), cfg.Logger)
	if err != nil {
		return nil, err
	}
	for _, svc := range builtin {
		reg.AddAPIServiceToSyncOnStart(svc)
	}
	auto := &autoregistration{reg: reg, factory: factory}
	if servesV1(cfg.API, routes.GroupAPIExtensions, "customresourcedefinitions") {
		cc, err := crdclient.NewForConfig(a.cl.loopback.config())
		if err != nil {
			return nil, fmt.Errorf("building the in-process CRD client: %w", err)
		}
		auto.crdFactory = crdinformers.NewSharedInformerFactory(cc, 0)
		if auto.crds, err = autoregister.NewCRDs(auto.crdFactory.Apiextensions().V1().CustomResourceDefinitions(), reg, cfg.Logger); err != nil {
			return nil, err
		}
	}
	return auto, nil
}

// start starts the informers and the controllers, which stop with ctx.
func (r *autoregistration) start(ctx context.Context, bg *background) {
	// The core informers (services, endpointslices) start with the start-informers hook.
	r.factory.Start(ctx.Done())
	if r.crdFactory != nil {
		r.crdFactory.Start(ctx.Done())
	}
	// factory is shut down by the start-informers hook, which owns it.
	bg.goRun(func() {
		<-ctx.Done()
		if r.crdFactory != nil {
			r.crdFactory.Shutdown()
		}
	})
	if r.crds != nil {
		bg.goRun(func() { r.crds.Run(ctx) })
	}
	bg.goRun(func() {
		// As kube: the CRDs present at start are registered before the first look, which
		// would otherwise delete their APIServices.
		if r.crds != nil {
			select {
			case <-r.crds.InitialSync():
			case <-ctx.Done():
				return
			}
		}
		r.reg.Run(ctx, 5)
	})
}

// addAPIServiceAvailability builds the local availability controller (nil when the API cannot tell),
// registers the remote one under the Lease and the autoregister-completion readyz check, and returns
// the local controller and the completion it waits for.
//
// Availability needs Services and EndpointSlices to judge remote APIServices; without them it does
// not run, and /readyz does not wait for Available conditions that would never come.
func (a *assembly) addAPIServiceAvailability(client aggregatorclient.Interface, apiServices apiregistrationinformers.APIServiceInformer, builtin []*apiregistrationv1.APIService) (*apiserviceavailable.Controller, *autoregister.Completion, error) {
	s, cfg, o, cl, ctrls := a.server, a.cfg, a.o, a.cl, &a.ctrls
	if !servesV1(cfg.API, routes.GroupCore, "services") || !servesV1(cfg.API, "discovery.k8s.io", "endpointslices") {
		cfg.Logger.Info("not setting the Available condition of APIServices: the API serves no services or endpointslices")
		return nil, nil, nil
	}
	res, err := cl.serviceResolver()
	if err != nil {
		return nil, nil, err
	}
	certFile, keyFile := proxyClientPair(o)
	availConfig := func(only apiserviceavailable.Scope) apiserviceavailable.Config {
		return apiserviceavailable.Config{
			APIServices: apiServices, Services: cl.informers.Core().V1().Services(),
			EndpointSlices: cl.informers.Discovery().V1().EndpointSlices(), Client: client.ApiregistrationV1(),
			Resolver: res, ProxyClientCert: proxyClientCert(certFile, keyFile, cfg), Logger: cfg.Logger, Only: only,
		}
	}
	// The remote controller is built anew each term, after the informers started: ask for its
	// informers now, so that the start-informers hook starts them.
	cl.informers.Core().V1().Services().Informer()
	cl.informers.Discovery().V1().EndpointSlices().Informer()
	avail, err := apiserviceavailable.New(availConfig(apiserviceavailable.LocalOnly))
	if err != nil {
		return nil, nil, err
	}
	// A new controller each term: one runs once (its handlers leave the shared informers).
	ctrls.add("apiservice-status-remote-available-controller", func(ctx context.Context) {
		remote, err := apiserviceavailable.New(availConfig(apiserviceavailable.RemoteOnly))
		if err != nil {
			cfg.Logger.Error("the remote APIService availability controller cannot start", "err", err)
			<-ctx.Done()
			return
		}
		remote.Run(ctx, 5)
	})
	done, err := autoregister.NewCompletion(apiServices, builtin)
	if err != nil {
		return nil, nil, err
	}
	if err := s.AddReadyzChecks(healthz.NamedCheck(autoregister.CompletionCheckName, func(*http.Request) error { return done.Check() })); err != nil {
		return nil, nil, err
	}
	return avail, done, nil
}

// proxyClientCert reads the front-proxy client pair at every discovery check, so that a renewed
// pair is used at once, as kube's dynamic certificate content is; none when there is no pair.
func proxyClientCert(certFile, keyFile string, cfg *serve.Config) func() ([]byte, []byte) {
	if certFile == "" {
		return nil
	}
	return func() ([]byte, []byte) {
		cert, errCert := os.ReadFile(certFile)
		key, errKey := os.ReadFile(keyFile)
		if err := errors.Join(errCert, errKey); err != nil {
			cfg.Logger.Warn("reading the front-proxy client pair for an APIService discovery check", "err", err)
			return nil, nil
		}
		return cert, key
	}
}
