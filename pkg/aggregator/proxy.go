// Package aggregator is apictl's aggregation layer, as kube's aggregator (k8s.io/kube-aggregator)
// behaves where clients look: every APIService with a service is a group version another server
// serves; requests for it are proxied to that server, and its discovery and OpenAPI are fetched and
// merged into the server's own.
package aggregator

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/proxy"
	"k8s.io/apiserver/pkg/util/webhook"
	"k8s.io/client-go/transport"
	"k8s.io/streaming/pkg/httpstream"

	"github.com/apictl/apictl/pkg/serve/request"
)

// discoveryTimeout bounds a proxied request for /apis/<group>/<version>: discovery should be cheap,
// and a slow extension server must not hold kubectl up (kube's aggregatedDiscoveryTimeout).
const discoveryTimeout = 5 * time.Second

// proxyHandler proxies the requests of one remote APIService. Its target changes as the APIService
// does, behind an atomic pointer, so that the handler the API state holds stays the same value.
type proxyHandler struct {
	resolver webhook.ServiceResolver
	log      *slog.Logger
	target   atomic.Pointer[proxyTarget]
}

// proxyTarget is where an APIService's requests go, and whether they may go there yet.
type proxyTarget struct {
	name                string // the APIService's
	namespace, service  string
	port                int32
	available           bool
	roundTripper        http.RoundTripper
	transportBuildError error
}

func (p *proxyHandler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	t := p.target.Load()
	if t == nil || !t.available {
		// kube's aggregator answers plain text here, not a Status.
		http.Error(w, "service unavailable", http.StatusServiceUnavailable)
		return
	}
	if t.transportBuildError != nil {
		http.Error(w, t.transportBuildError.Error(), http.StatusInternalServerError)
		return
	}
	user, ok := request.UserFrom(req.Context())
	if !ok {
		http.Error(w, "missing user", http.StatusInternalServerError)
		return
	}
	loc, err := p.resolver.ResolveEndpoint(t.namespace, t.service, t.port)
	if err != nil {
		p.log.Error("unable to resolve the service of an APIService", "apiService", t.name, "service", t.namespace+"/"+t.service, "err", err)
		http.Error(w, "service unavailable", http.StatusServiceUnavailable)
		return
	}
	location := &url.URL{Scheme: "https", Host: loc.Host, Path: req.URL.Path, RawQuery: req.URL.Query().Encode()}

	ctx := req.Context()
	if isGroupVersionDiscovery(req.URL.Path) {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, discoveryTimeout)
		defer cancel()
	}
	out := req.WithContext(ctx)
	out.Header = utilnet.CloneHeader(req.Header)
	out.URL = location

	upgrade := httpstream.IsUpgradeRequest(req)
	rt := transport.NewAuthProxyRoundTripper(user.Name, user.UID, user.Groups, user.Extra, t.roundTripper)
	if upgrade {
		// An upgrade dials the backend directly with the transport's TLS settings, without the round
		// tripper that would add the user: the headers go on the request itself.
		transport.SetAuthProxyHeaders(out, user.Name, user.UID, user.Groups, user.Extra)
	}
	h := proxy.NewUpgradeAwareHandler(location, rt, true, upgrade, &responder{w: w})
	h.ServeHTTP(hijackable{w}, out)
}

// isGroupVersionDiscovery reports whether p is /apis/<group>/<version>, a discovery request.
func isGroupVersionDiscovery(p string) bool {
	return len(strings.Split(strings.Trim(p, "/"), "/")) == 3
}

// hijackable lets the upgrade-aware proxy hijack the connection through the filters' response
// writers, which unwrap to it but do not implement http.Hijacker themselves.
type hijackable struct{ http.ResponseWriter }

func (h hijackable) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(h.ResponseWriter).Hijack()
}

func (h hijackable) Flush() { _ = http.NewResponseController(h.ResponseWriter).Flush() }

func (h hijackable) Unwrap() http.ResponseWriter { return h.ResponseWriter }

// responder writes the proxy's errors as kube's aggregator does: 503 with the error as plain text.
type responder struct{ w http.ResponseWriter }

func (r *responder) Object(statusCode int, obj runtime.Object) {
	b, err := json.Marshal(obj)
	if err != nil {
		http.Error(r.w, err.Error(), http.StatusInternalServerError)
		return
	}
	r.w.Header().Set("Content-Type", "application/json")
	r.w.WriteHeader(statusCode)
	_, _ = r.w.Write(b)
}

func (r *responder) Error(_ http.ResponseWriter, _ *http.Request, err error) {
	http.Error(r.w, err.Error(), http.StatusServiceUnavailable)
}

// newRoundTripper builds the transport to an APIService's service: TLS verified with its caBundle
// (or not at all with insecureSkipTLSVerify) for the name <service>.<namespace>.svc, presenting the
// front-proxy client certificate.
func newRoundTripper(cert *transport.GetCertHolder, caBundle []byte, insecure bool, namespace, service string) (http.RoundTripper, error) {
	cfg := &transport.Config{TLS: transport.TLSConfig{
		Insecure:      insecure,
		ServerName:    service + "." + namespace + ".svc",
		CAData:        caBundle,
		GetCertHolder: cert,
	}}
	rt, err := transport.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("building the transport to service %s/%s: %w", namespace, service, err)
	}
	return rt, nil
}
