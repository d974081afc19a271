package apiserver

import (
	"context"
	"fmt"
	"maps"
	"os"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apictl/apictl/pkg/certs"
	"github.com/apictl/apictl/pkg/controllers/rootcacert"
	"github.com/apictl/apictl/pkg/controllers/serviceaccounts"
	"github.com/apictl/apictl/pkg/flags"
	"github.com/apictl/apictl/pkg/serve/auth/serviceaccount"
	"github.com/apictl/apictl/pkg/serve/handlers"
	"github.com/apictl/apictl/pkg/storage"
)

// tokenRequestKey is the route of TokenRequest: POST serviceaccounts/{name}/token.
var tokenRequestKey = handlers.CreateKey{Version: "v1", Resource: "serviceaccounts", Subresource: "token"}

// withTokenRequest adds the TokenRequest handler to creaters when the server issues tokens.
func withTokenRequest(creaters map[handlers.CreateKey]handlers.Creater, tokens *serviceaccount.Tokens) map[handlers.CreateKey]handlers.Creater {
	if tokens == nil {
		return creaters
	}
	out := maps.Clone(creaters)
	if out == nil {
		out = map[handlers.CreateKey]handlers.Creater{}
	}
	out[tokenRequestKey] = func(ctx context.Context, req handlers.CreateRequest) (runtime.Object, error) {
		tr, ok := req.Object.(*authenticationv1.TokenRequest)
		if !ok {
			return nil, apierrors.NewInternalError(fmt.Errorf("a token request decoded as %T", req.Object))
		}
		// kube's TokenREST issues a token on dryRun too: it stores nothing either way.
		out, warnings, err := tokens.Requester.Create(ctx, req.Namespace, req.Name, tr)
		if err != nil {
			return nil, err
		}
		for _, w := range warnings {
			req.Warn(w)
		}
		return out, nil
	}
	return out
}

// coreStores are the watch caches of core resources by plural.
func coreStores(caches *watchCaches, resources ...string) map[string]storage.Store {
	out := map[string]storage.Store{}
	for _, r := range resources {
		if s, ok := caches.byResource[schema.GroupResource{Resource: r}]; ok {
			out[r] = s
		}
	}
	return out
}

// rootCABundle is what kube-root-ca.crt publishes: the CA that signed the serving certificate when
// apictl bootstrapped the PKI (kubeadm's cluster CA, which kube-controller-manager gets as
// --root-ca-file), else the --client-ca-file bundle (the CA an operator-run PKI has clients trust).
// With neither, there is nothing to publish (nil).
func rootCABundle(o *flags.ServerOptions) ([]byte, string, error) {
	path := ""
	switch {
	case o.SecureServing.BindPort != 0 && o.SecureServing.CertFile == "":
		path = certs.CertPath(o.SecureServing.CertDir, certs.NameCA)
	case o.Authentication.ClientCAFile != "":
		path = o.Authentication.ClientCAFile
	default:
		return nil, "", nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, path, fmt.Errorf("reading the root CA bundle to publish: %w", err)
	}
	return data, path, nil
}

// addServiceAccountHooks connects the token issuer to storage and registers kube-controller-manager's
// service-account controllers, which run once per cluster under the Lease (ctrls): a default
// ServiceAccount and the kube-root-ca.crt ConfigMap in every active namespace.
func (a *assembly) addServiceAccountHooks() error {
	cfg, o, resources, caches, ctrls := a.cfg, a.o, a.rest, a.caches, &a.ctrls
	stores := coreStores(caches, "namespaces", "serviceaccounts", "secrets", "configmaps")
	if cfg.ServiceAccountTokens != nil {
		cfg.ServiceAccountTokens.SetStores(stores)
	}
	namespaces, saStore, cmStore := stores["namespaces"], stores["serviceaccounts"], stores["configmaps"]
	if namespaces == nil || saStore == nil {
		return nil // core/v1 turned off by --runtime-config
	}
	rootCA, rootCAPath, err := rootCABundle(o)
	if err != nil {
		return err
	}
	lb, err := newLoopback(cfg.API, resources)
	if err != nil {
		return fmt.Errorf("building the loopback client: %w", err)
	}
	core, err := lb.coreClient()
	if err != nil {
		return fmt.Errorf("building the loopback client: %w", err)
	}
	if rootCA == nil {
		cfg.Logger.Info("no root CA bundle to publish as kube-root-ca.crt: the serving certificate is --tls-cert-file and there is no --client-ca-file")
	}
	// kube-controller-manager's names for them.
	ctrls.add("serviceaccount-controller", func(ctx context.Context) {
		serviceaccounts.New(namespaces, saStore, core, cfg.Logger).Run(ctx)
	})
	if rootCA != nil && cmStore != nil {
		ctrls.add("root-ca-certificate-publisher-controller", func(ctx context.Context) {
			cfg.Logger.Debug("publishing the root CA bundle as kube-root-ca.crt", "file", rootCAPath)
			rootcacert.New(namespaces, cmStore, core, rootCA, cfg.Logger).Run(ctx)
		})
	}
	return nil
}
