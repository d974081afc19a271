package app

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/apictl/apictl/pkg/routes"
)

// discoveryTimeout bounds each discovery request, so that an unreachable server fails the command
// instead of hanging it.
const discoveryTimeout = 30 * time.Second

// liveOptions say how `apictl routes` reaches a running server.
type liveOptions struct {
	server     string
	kubeconfig string
	token      string
	caFile     string
	insecure   bool
}

func (o *liveOptions) addFlags(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&o.server, "server", "", "Compute the table from the discovery of the API server at this URL (https://host:6443) instead of from the local configuration")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file for the server (its current context; --server and the other flags override it)")
	fs.StringVar(&o.token, "token", "", "Bearer token for the server")
	fs.StringVar(&o.caFile, "certificate-authority", "", "CA certificate file to verify the server's certificate with")
	fs.BoolVar(&o.insecure, "insecure-skip-tls-verify", false, "Do not verify the server's certificate (insecure: use only against test servers)")
}

// enabled reports whether the table comes from a live server.
func (o *liveOptions) enabled() bool { return o.server != "" || o.kubeconfig != "" }

// restConfig builds the client configuration: from --kubeconfig with the other flags overriding
// it, or from the flags alone. No kubeconfig is read unless one is named, so the command never
// talks to a cluster the user did not point it at.
func (o *liveOptions) restConfig() (*rest.Config, error) {
	var cfg *rest.Config
	if o.kubeconfig != "" {
		overrides := &clientcmd.ConfigOverrides{}
		overrides.ClusterInfo.Server = o.server
		overrides.ClusterInfo.CertificateAuthority = o.caFile
		overrides.ClusterInfo.InsecureSkipTLSVerify = o.insecure
		overrides.AuthInfo.Token = o.token
		loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(&clientcmd.ClientConfigLoadingRules{ExplicitPath: o.kubeconfig}, overrides)
		c, err := loader.ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("reading --kubeconfig %s: %w", o.kubeconfig, err)
		}
		cfg = c
	} else {
		cfg = &rest.Config{Host: o.server, BearerToken: o.token}
		cfg.TLSClientConfig.CAFile = o.caFile
		cfg.TLSClientConfig.Insecure = o.insecure
	}
	cfg.Timeout = discoveryTimeout
	cfg.UserAgent = "apictl-routes"
	return cfg, nil
}

// liveAPI reads a server's discovery and rebuilds its API model. Groups whose discovery fails are
// left out with a warning, as kubectl does.
func liveAPI(ctx context.Context, o liveOptions, streams Streams) (*routes.API, error) {
	cfg, err := o.restConfig()
	if err != nil {
		return nil, err
	}
	client, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", cfg.Host, err)
	}
	groups, lists, err := client.ServerGroupsAndResourcesWithContext(ctx)
	if err != nil {
		if !discovery.IsGroupDiscoveryFailedError(err) || len(groups) == 0 {
			return nil, fmt.Errorf("reading the discovery of %s: %w", cfg.Host, err)
		}
		fmt.Fprintf(streams.ErrOut, "warning: %v; the table leaves those groups out\n", err)
	}
	api, err := routes.FromDiscovery(groups, lists)
	if err != nil {
		return nil, fmt.Errorf("reading the discovery of %s: %w", cfg.Host, err)
	}
	return api, nil
}
