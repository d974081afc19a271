package apiserviceavailable

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/transport"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// ServiceResolver turns a service reference into the URL of a backend: pkg/resolver's Resolver,
// the one the aggregator's proxy uses (k8s.io/apiserver/pkg/util/webhook.ServiceResolver).
type ServiceResolver interface {
	ResolveEndpoint(namespace, name string, port int32) (*url.URL, error)
}

// Kube's discovery check: five attempts at once, each with a 5 s client timeout and given up after
// 6 s; one success is enough.
const (
	discoveryAttempts      = 5
	discoveryClientTimeout = 5 * time.Second
	discoveryGiveUp        = 6 * time.Second
)

// TransportConfig is the TLS client an APIService's backend is reached with, as kube's aggregator
// builds it (remote.BuildTransportConfig): the APIService's caBundle (or no verification with
// insecureSkipTLSVerify), the server name <service>.<namespace>.svc, and the front-proxy client
// certificate as the aggregator's identity.
func TransportConfig(s *apiregistrationv1.APIService, clientCert, clientKey []byte) *transport.Config {
	return &transport.Config{TLS: transport.TLSConfig{
		Insecure:   s.Spec.InsecureSkipTLSVerify,
		ServerName: s.Spec.Service.Name + "." + s.Spec.Service.Namespace + ".svc",
		CertData:   clientCert,
		KeyData:    clientKey,
		CAData:     s.Spec.CABundle,
	}}
}

// checkDiscovery GETs the group version's discovery document from the backend as
// system:kube-aggregator in system:masters, as kube does, and returns kube's error for the last
// failed attempt when none succeeds. It returns when every attempt has ended.
func (c *Controller) checkDiscovery(ctx context.Context, s *apiregistrationv1.APIService) error {
	var cert, key []byte
	if c.cfg.ProxyClientCert != nil {
		cert, key = c.cfg.ProxyClientCert()
	}
	rt, err := transport.New(TransportConfig(s, cert, key))
	if err != nil {
		return fmt.Errorf("building the transport to apiservice %s: %w", s.Name, err)
	}
	client := &http.Client{Transport: rt, Timeout: discoveryClientTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	// The attempts still running when one succeeds are cancelled, then awaited.
	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make(chan error, discoveryAttempts)
	for range discoveryAttempts {
		wg.Go(func() { results <- c.attempt(ctx, &wg, client, rt, s) })
	}
	var last error
	for range discoveryAttempts {
		if last = <-results; last == nil {
			return nil
		}
	}
	return last
}

// attempt is one try of kube's check; the GET runs in its own goroutine (on wg) so that a slow dial
// is given up after discoveryGiveUp.
func (c *Controller) attempt(ctx context.Context, wg *sync.WaitGroup, client *http.Client, rt http.RoundTripper, s *apiregistrationv1.APIService) error {
	u, err := c.cfg.Resolver.ResolveEndpoint(s.Spec.Service.Namespace, s.Spec.Service.Name, port(s))
	if err != nil {
		return err
	}
	if s.Name == "v1." {
		u.Path = "/api/" + s.Spec.Version
	} else {
		u.Path = "/apis/" + s.Spec.Group + "/" + s.Spec.Version
	}
	done := make(chan error, 1)
	wg.Go(func() {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
		if err != nil {
			done <- err
			return
		}
		transport.SetAuthProxyHeaders(req, "system:kube-aggregator", "", []string{"system:masters"}, nil)
		resp, err := client.Do(req)
		if resp != nil {
			resp.Body.Close()
			if resp.StatusCode < http.StatusOK || resp.StatusCode >= http.StatusMultipleChoices {
				done <- fmt.Errorf("bad status from %v: %d", u, resp.StatusCode)
				return
			}
		}
		done <- err
	})
	t := time.NewTimer(discoveryGiveUp)
	defer t.Stop()
	select {
	case err := <-done:
		if err != nil {
			utilnet.CloseIdleConnectionsFor(rt)
			return fmt.Errorf("failing or missing response from %v: %w", u, err)
		}
		return nil
	case <-t.C:
		utilnet.CloseIdleConnectionsFor(rt)
		return fmt.Errorf("timed out waiting for %v", u)
	case <-ctx.Done():
		return errors.Join(fmt.Errorf("timed out waiting for %v", u), ctx.Err())
	}
}

// port is the APIService's service port; the API defaults it to 443.
func port(s *apiregistrationv1.APIService) int32 {
	if s.Spec.Service.Port == nil {
		return 443
	}
	return *s.Spec.Service.Port
}
