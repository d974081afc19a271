package aggregator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/util/webhook"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/transport"
	"k8s.io/client-go/util/workqueue"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"k8s.io/kube-aggregator/pkg/apis/apiregistration/v1/helper"
	informers "k8s.io/kube-aggregator/pkg/client/informers/externalversions/apiregistration/v1"
	listers "k8s.io/kube-aggregator/pkg/client/listers/apiregistration/v1"

	"github.com/apictl/apictl/pkg/controllers/synced"
	"github.com/apictl/apictl/pkg/serve"
)

// refreshInterval is how often a remote group version's discovery and OpenAPI are fetched again
// (kube's discoveryRefreshInterval and its OpenAPI controllers' successfulUpdateDelay).
const refreshInterval = time.Minute

// RemoteSetter takes the remote part of the API: the server (serve.Server.SetRemote).
type RemoteSetter interface {
	SetRemote(*serve.Remote) error
}

// Config is what the aggregator is built from.
type Config struct {
	// APIServices is the informer of apiregistration.k8s.io/v1 APIServices; its factory is started
	// by the caller.
	APIServices informers.APIServiceInformer
	// Resolver turns an APIService's service into an address.
	Resolver webhook.ServiceResolver
	// ProxyClientCertFile and ProxyClientKeyFile are the front-proxy client pair the proxy presents to
	// extension servers (kube's --proxy-client-cert-file and --proxy-client-key-file); empty presents
	// none.
	ProxyClientCertFile, ProxyClientKeyFile string
	// Target receives the remote group versions each time they change.
	Target RemoteSetter
	Logger *slog.Logger
}

// Controller keeps the server's remote group versions in step with the APIServices: a proxy for each
// APIService with a service, and its discovery and OpenAPI fetched when it changes and every minute.
type Controller struct {
	lister   listers.APIServiceLister
	synced   cache.InformerSynced
	resolver webhook.ServiceResolver
	cert     *transport.GetCertHolder
	target   RemoteSetter
	log      *slog.Logger
	queue    workqueue.TypedRateLimitingInterface[string]

	mu      sync.Mutex
	remotes map[string]*remote // by APIService name
	// published is what the server was last given, to give it nothing when nothing changed.
	published *serve.Remote
	// publishMu serializes publishing, so that a later state is never overwritten by an earlier one.
	publishMu sync.Mutex
}

// remote is the aggregator's view of one remote APIService.
type remote struct {
	proxy *proxyHandler
	// transportKey is what the round tripper was built from.
	transportKey transportKey
	discovery    *discoveryResult
	openAPI      *openAPIResult
}

type transportKey struct {
	caBundle           string
	insecure           bool
	namespace, service string
}

// New builds the aggregator and registers its event handlers on the informer.
func New(cfg Config) (*Controller, error) {
	if cfg.APIServices == nil || cfg.Resolver == nil || cfg.Target == nil {
		return nil, errors.New("the aggregator needs an APIService informer, a service resolver and a server")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Controller{
		lister:   cfg.APIServices.Lister(),
		resolver: cfg.Resolver,
		cert:     newCertHolder(cfg.ProxyClientCertFile, cfg.ProxyClientKeyFile),
		target:   cfg.Target,
		log:      log,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](500*time.Millisecond, refreshInterval),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "aggregator"}),
		remotes: map[string]*remote{},
	}
	enqueue := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			c.queue.Add(key)
		}
	}
	reg, err := cfg.APIServices.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
		DeleteFunc: enqueue,
	})
	if err != nil {
		return nil, fmt.Errorf("watching APIServices: %w", err)
	}
	c.synced = reg.HasSynced
	return c, nil
}

// Start waits for the APIServices to be listed and installs a proxy for each remote one, so that
// the server answers for them once Start returns; discovery and OpenAPI follow as Run fetches them.
func (c *Controller) Start(ctx context.Context) error {
	if !synced.Wait(ctx, c.synced) {
		return fmt.Errorf("the APIService informer did not sync: %w", ctx.Err())
	}
	all, err := c.lister.List(labels.Everything())
	if err != nil {
		return fmt.Errorf("listing APIServices: %w", err)
	}
	for _, svc := range all {
		if svc.Spec.Service != nil {
			c.install(svc)
		}
	}
	return c.publish()
}

// Run fetches and refreshes the remote group versions' discovery and OpenAPI with two workers, as
// kube's discovery manager has, until ctx ends; it returns once they stopped.
func (c *Controller) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c.processNext(ctx) {
			}
		}()
	}
	<-ctx.Done()
	c.queue.ShutDown()
	wg.Wait()
}

func (c *Controller) processNext(ctx context.Context) bool {
	name, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(name)
	refresh, err := c.sync(ctx, name)
	switch {
	case err != nil:
		c.log.Debug("unable to sync an APIService", "apiService", name, "err", err)
		c.queue.AddRateLimited(name)
	case refresh:
		c.queue.Forget(name)
		c.queue.AddAfter(name, refreshInterval)
	default:
		c.queue.Forget(name)
	}
	return true
}

// sync brings one APIService's proxy, discovery and OpenAPI up to date and gives the server the
// result. It reports whether the APIService is remote, and so to be fetched again later.
func (c *Controller) sync(ctx context.Context, name string) (bool, error) {
	svc, err := c.lister.Get(name)
	if apierrors.IsNotFound(err) || (err == nil && svc.Spec.Service == nil) {
		c.mu.Lock()
		delete(c.remotes, name)
		c.mu.Unlock()
		return false, c.publish()
	}
	if err != nil {
		return false, err
	}
	r := c.install(svc)
	gv := schema.GroupVersion{Group: svc.Spec.Group, Version: svc.Spec.Version}

	c.mu.Lock()
	lastDiscovery, lastOpenAPI := r.discovery, r.openAPI
	c.mu.Unlock()
	d, discoveryErr := fetchDiscovery(ctx, r.proxy, gv, lastDiscovery)
	o, openAPIErr := fetchOpenAPI(ctx, r.proxy, gv, lastOpenAPI)
	c.mu.Lock()
	if c.remotes[name] == r {
		r.discovery, r.openAPI = d, o
	}
	c.mu.Unlock()
	if openAPIErr != nil {
		c.log.Debug("unable to fetch the OpenAPI of an APIService", "apiService", name, "err", openAPIErr)
	}
	return true, errors.Join(discoveryErr, c.publish())
}

// install creates or updates the proxy of a remote APIService.
func (c *Controller) install(svc *apiregistrationv1.APIService) *remote {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.remotes[svc.Name]
	if r == nil {
		r = &remote{proxy: &proxyHandler{resolver: c.resolver, log: c.log}}
		c.remotes[svc.Name] = r
	}
	ref := svc.Spec.Service
	port := int32(443)
	if ref.Port != nil {
		port = *ref.Port
	}
	key := transportKey{caBundle: string(svc.Spec.CABundle), insecure: svc.Spec.InsecureSkipTLSVerify, namespace: ref.Namespace, service: ref.Name}
	t := &proxyTarget{
		name: svc.Name, namespace: ref.Namespace, service: ref.Name, port: port,
		available: helper.IsAPIServiceConditionTrue(svc, apiregistrationv1.Available),
	}
	if old := r.proxy.target.Load(); old != nil && r.transportKey == key {
		t.roundTripper, t.transportBuildError = old.roundTripper, old.transportBuildError
	} else {
		t.roundTripper, t.transportBuildError = newRoundTripper(c.cert, svc.Spec.CABundle, svc.Spec.InsecureSkipTLSVerify, ref.Namespace, ref.Name)
		r.transportKey = key
		if t.transportBuildError != nil {
			c.log.Warn("unable to build the transport of an APIService", "apiService", svc.Name, "err", t.transportBuildError)
		}
	}
	r.proxy.target.Store(t)
	return r
}

// publish gives the server the current remote group versions, unless they are what it has.
func (c *Controller) publish() error {
	c.publishMu.Lock()
	defer c.publishMu.Unlock()
	all, err := c.lister.List(labels.Everything())
	if err != nil {
		return fmt.Errorf("listing APIServices: %w", err)
	}
	slices.SortFunc(all, func(a, b *apiregistrationv1.APIService) int { return strings.Compare(a.Name, b.Name) })
	out := &serve.Remote{LocalPriorities: map[schema.GroupVersion]serve.Priority{}}
	c.mu.Lock()
	for _, svc := range all {
		p := serve.Priority{Group: svc.Spec.GroupPriorityMinimum, Version: svc.Spec.VersionPriority}
		if svc.Spec.Service == nil {
			out.LocalPriorities[schema.GroupVersion{Group: svc.Spec.Group, Version: svc.Spec.Version}] = p
			continue
		}
		r, ok := c.remotes[svc.Name]
		if !ok {
			continue // not installed yet: its sync publishes it
		}
		gv := serve.RemoteGroupVersion{Group: svc.Spec.Group, Version: svc.Spec.Version, Priority: p, Handler: r.proxy}
		if r.discovery != nil {
			v := r.discovery.version
			gv.Discovery = &v
		}
		if r.openAPI != nil {
			gv.OpenAPIV2, gv.OpenAPIV3URL = r.openAPI.v2, r.openAPI.v3URL
		}
		out.GroupVersions = append(out.GroupVersions, gv)
	}
	c.mu.Unlock()
	prev := c.published
	if prev == nil {
		prev = &serve.Remote{} // the server starts with nothing remote
	}
	if sameRemote(prev, out) {
		return nil
	}
	if err := c.target.SetRemote(out); err != nil {
		return fmt.Errorf("serving the remote group versions: %w", err)
	}
	c.published = out
	return nil
}

// sameRemote reports whether two remote parts would give the same API state. Local priorities
// only place remote groups: without any, the state is the local API's whatever they are (so that the
// Local APIServices of CRDs coming and going rebuild nothing here).
func sameRemote(a, b *serve.Remote) bool {
	if len(a.GroupVersions) == 0 && len(b.GroupVersions) == 0 {
		return true
	}
	if !reflect.DeepEqual(a.LocalPriorities, b.LocalPriorities) || len(a.GroupVersions) != len(b.GroupVersions) {
		return false
	}
	for i := range a.GroupVersions {
		x, y := &a.GroupVersions[i], &b.GroupVersions[i]
		if x.Group != y.Group || x.Version != y.Version || x.Priority != y.Priority || x.Handler != y.Handler ||
			x.OpenAPIV3URL != y.OpenAPIV3URL || !bytes.Equal(x.OpenAPIV2, y.OpenAPIV2) || !reflect.DeepEqual(x.Discovery, y.Discovery) {
			return false
		}
	}
	return true
}

var _ http.Handler = (*proxyHandler)(nil)
