package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
//
// The documents are read with plain requests rather than client-go's discovery client, whose
// package links and registers every k8s.io/api group at start-up in every apictl process: that
// costs the server several megabytes of resident memory for a command it never runs.
func liveAPI(ctx context.Context, o liveOptions, streams Streams) (*routes.API, error) {
	cfg, err := o.restConfig()
	if err != nil {
		return nil, err
	}
	d, err := newDiscoveryReader(cfg)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", cfg.Host, err)
	}
	groups, err := d.groups(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the discovery of %s: %w", cfg.Host, err)
	}
	var lists []*metav1.APIResourceList
	var failed []string
	for _, g := range groups {
		for _, v := range g.Versions {
			var list metav1.APIResourceList
			if err := d.get(ctx, routes.GroupVersionPath(g.Name, v.Version), &list); err != nil {
				failed = append(failed, fmt.Sprintf("%s: %v", v.GroupVersion, err))
				continue
			}
			lists = append(lists, &list)
		}
	}
	if len(failed) > 0 {
		if len(lists) == 0 {
			return nil, fmt.Errorf("reading the discovery of %s: %s", cfg.Host, strings.Join(failed, "; "))
		}
		fmt.Fprintf(streams.ErrOut, "warning: unable to retrieve the complete list of server APIs: %s; the table leaves those groups out\n",
			strings.Join(failed, "; "))
	}
	api, err := routes.FromDiscovery(groups, lists)
	if err != nil {
		return nil, fmt.Errorf("reading the discovery of %s: %w", cfg.Host, err)
	}
	return api, nil
}

// discoveryReader reads discovery documents with the client configuration's transport, TLS and
// credentials.
type discoveryReader struct {
	client *http.Client
	base   string
}

func newDiscoveryReader(cfg *rest.Config) (*discoveryReader, error) {
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	base, _, err := rest.DefaultServerUrlFor(cfg)
	if err != nil {
		return nil, err
	}
	return &discoveryReader{client: client, base: strings.TrimSuffix(base.String(), "/")}, nil
}

// groups lists the served groups with the legacy core group first, as /api and /apis describe them.
func (d *discoveryReader) groups(ctx context.Context) ([]*metav1.APIGroup, error) {
	var core metav1.APIVersions
	if err := d.get(ctx, "/api", &core); err != nil {
		return nil, err
	}
	var groups []*metav1.APIGroup
	if len(core.Versions) > 0 {
		g := &metav1.APIGroup{Name: ""}
		for _, v := range core.Versions {
			g.Versions = append(g.Versions, metav1.GroupVersionForDiscovery{GroupVersion: v, Version: v})
		}
		g.PreferredVersion = g.Versions[0]
		groups = append(groups, g)
	}
	var list metav1.APIGroupList
	if err := d.get(ctx, "/apis", &list); err != nil {
		return nil, err
	}
	for i := range list.Groups {
		groups = append(groups, &list.Groups[i])
	}
	return groups, nil
}

// get reads one discovery document into out.
func (d *discoveryReader) get(ctx context.Context, path string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.base+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := d.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDiscoveryDocument))
	if err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", path, resp.Status, strings.TrimSpace(string(body)))
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("GET %s: not a discovery document: %w", path, err)
	}
	return nil
}

// maxDiscoveryDocument bounds one discovery document; the largest real ones are a few hundred KB.
const maxDiscoveryDocument = 32 << 20
