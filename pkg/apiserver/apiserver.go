// Package apiserver assembles `apictl serve` from its parts: checked options become a serve.Config,
// storage is started, the REST handlers are built on it, and the server is created and prepared. The
// command and the test server both build through here, so tests run exactly what users run.
package apiserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/apictl/apictl/pkg/admission"
	"github.com/apictl/apictl/pkg/controllers/namespaces"
	"github.com/apictl/apictl/pkg/flags"
	"github.com/apictl/apictl/pkg/gcrelax"
	"github.com/apictl/apictl/pkg/memreturn"
	"github.com/apictl/apictl/pkg/registry"
	"github.com/apictl/apictl/pkg/registry/crschema"
	"github.com/apictl/apictl/pkg/routes"
	"github.com/apictl/apictl/pkg/serve"
	"github.com/apictl/apictl/pkg/serve/auth/rbac"
	"github.com/apictl/apictl/pkg/serve/handlers"
	"github.com/apictl/apictl/pkg/serve/healthz"
)

// Extras are knobs that are not flags: what tests need to run servers quickly and quietly.
type Extras struct {
	// Adjust, when set, may change the configuration before the server is created.
	Adjust func(*serve.Config)
	// UnsafeNoFsync runs the embedded etcd without fsync: a crash loses data. Tests only.
	UnsafeNoFsync bool
}

// New builds a prepared server from completed and validated options, logging to logOut. Each step
// is a function of its own; the assembly carries what the earlier ones built to the later ones.
func New(ctx context.Context, o *flags.ServerOptions, logOut io.Writer, extras Extras) (_ *serve.PreparedServer, err error) {
	// Until the server is ready, the collector lets the heap grow more between collections, unless
	// the start fills large caches (pkg/gcrelax says why).
	relaxed := gcrelax.HoldWhileSmall(startLiveHeapMax)
	defer func() {
		if err != nil {
			relaxed()
		}
	}()
	a, err := startAssembly(ctx, o, logOut, extras)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			a.abort()
		}
	}()
	policy, policyStores, err := a.buildREST(ctx, extras)
	if err != nil {
		return nil, err
	}
	if err := a.createServer(relaxed); err != nil {
		return nil, err
	}
	if a.rbacServed {
		if err := a.addRBACHooks(policy, policyStores); err != nil {
			return nil, err
		}
	}
	if err := a.addHooks(); err != nil {
		return nil, err
	}
	a.prepared = a.server.PrepareRun()
	return a.prepared, nil
}

// assembly is what New has built so far: the steps after the first take what they need from it
// rather than from a list of parameters each.
type assembly struct {
	o      *flags.ServerOptions
	ports  boundPorts
	cfg    *serve.Config
	st     *storageStack
	caches *watchCaches
	// crds are the CRDs of --api-config, created through the API once the server runs.
	crds []routes.CRD
	// rbacServed says the API serves rbac.authorization.k8s.io/v1.
	rbacServed bool
	rest       *handlers.API
	server     *serve.Server
	cl         *clients
	bg         background
	// ctrls are the controllers that run once per cluster, on the holder of the leader election Lease.
	ctrls clusterControllers
	// prepared is set once every step has run; the hooks, which run later, may read it.
	prepared *serve.PreparedServer
}

// startAssembly checks and takes what the server needs (ports, the cluster, the API) and starts its
// storage. On failure it releases what it took; on success abort does.
func startAssembly(ctx context.Context, o *flags.ServerOptions, logOut io.Writer, extras Extras) (_ *assembly, err error) {
	// Nothing is changed (a member added, a dir made) until what the start needs is known to be there.
	ports, err := preflight(o)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			ports.close()
		}
	}()
	// A joiner takes the cluster's CAs before its PKI is made from them.
	ec, err := prepareCluster(ctx, o, logOut)
	if err != nil {
		return nil, err
	}
	cfg, err := o.Config(ctx, logOut)
	if err != nil {
		return nil, err
	}
	ports.handOver()
	defer func() {
		if err != nil {
			closeListeners(cfg)
		}
	}()
	// The API comes first: storage encrypts per resource and needs to know the served ones.
	api, crds, err := routes.LoadAPIAndCRDs(o.APIEnablement.APIConfig, o.APIEnablement.RuntimeConfig)
	if err != nil {
		return nil, fmt.Errorf("loading the API: %w", err)
	}
	// CRDs, those of --api-config among them, are served by the CRD controller as they are stored:
	// the server starts with the built-in API.
	cfg.API = api.WithoutCustom()
	st, err := startStorage(ctx, o, cfg.Logger, extras.UnsafeNoFsync, storedResources(api), ec)
	if err != nil {
		return nil, err
	}
	if err := ec.serveJoins(cfg, st.embedded); err != nil {
		_ = st.close(context.Background())
		return nil, err
	}
	return &assembly{o: o, ports: ports, cfg: cfg, st: st, crds: crds,
		ctrls: clusterControllers{enabled: o.Controllers.Enabled}}, nil
}

// abort releases what startAssembly took, after a later step failed.
func (a *assembly) abort() {
	_ = a.st.close(context.Background())
	closeListeners(a.cfg)
	a.ports.close()
}

// ready closes when the prepared server is ready; only the hooks call it, once prepared is set.
func (a *assembly) ready() <-chan struct{} { return a.prepared.Ready() }

// buildREST builds the watch caches and the REST handlers over the storage, and returns the RBAC
// policy and its stores for addRBACHooks.
func (a *assembly) buildREST(ctx context.Context, extras Extras) (*rbac.Policy, rbac.Stores, error) {
	cfg, o := a.cfg, a.o
	// The manifests' CRDs are created through the API once the server runs; what would refuse them
	// there is said now, before anything starts serving.
	_, compileErr := crschema.NewSet(a.crds)
	if err := errors.Join(compileErr, crschema.CheckRules(a.crds)); err != nil {
		return nil, rbac.Stores{}, fmt.Errorf("compiling the CRD schemas: %w", err)
	}
	reg, err := registry.New(cfg.API)
	if err != nil {
		return nil, rbac.Stores{}, fmt.Errorf("building the rules of the API's kinds: %w", err)
	}
	if a.caches, err = newWatchCaches(cfg.API, a.st.store, o.Generic.StorageInitializationTimeout, cfg.Logger); err != nil {
		return nil, rbac.Stores{}, err
	}
	cfg.ListStoredBytes = a.caches.storedBytes
	policy, rbacMode := rbacPolicy(cfg.Authorization)
	policyStores, rbacServed := rbacStores(a.caches)
	if rbacMode && !rbacServed {
		return nil, rbac.Stores{}, errors.New("--authorization-mode RBAC needs the rbac.authorization.k8s.io/v1 API: do not turn it off in --runtime-config")
	}
	a.rbacServed = rbacServed
	var escalation handlers.EscalationChecker
	if rbacServed {
		escalation = &rbac.Escalation{Policy: policy, Authorizer: cfg.Authorization}
	}
	stores, err := withServiceAllocation(ctx, o, a.caches.byResource, a.st.store, cfg.Logger)
	if err != nil {
		return nil, rbac.Stores{}, err
	}
	a.rest, err = handlers.New(handlers.Config{
		API:               cfg.API,
		Registry:          reg,
		Store:             a.st.store,
		Stores:            stores,
		Logger:            cfg.Logger,
		EventTTL:          o.Generic.EventTTL,
		MinRequestTimeout: cfg.MinRequestTimeout,
		Features:          cfg.FeatureGates,
		Escalation:        escalation,
		Authorizer:        admission.KubeAuthorizer(cfg.Authorization),
		// The review APIs ask the secure port's authenticator and authorizer.
		Creaters: withTokenRequest(reviewCreaters(cfg),
			cfg.ServiceAccountTokens),
	})
	if err != nil {
		return nil, rbac.Stores{}, err
	}
	cfg.Resources = a.rest
	if extras.Adjust != nil {
		extras.Adjust(cfg)
	}
	return policy, policyStores, nil
}

// createServer creates the server and adds what its storage needs: the watch caches, etcd's health
// and monitoring, the compactor, the space guard and the encryption reload, and closing it all at
// shutdown. relaxed ends the collector's start-up setting once the server is ready.
func (a *assembly) createServer(relaxed func()) error {
	cfg, st, caches, bg := a.cfg, a.st, a.caches, &a.bg
	nsStore, nsLog := a.rest.Namespaces(), cfg.Logger.With("component", "namespace-controller")
	a.ctrls.add("namespace-controller", func(ctx context.Context) {
		if nsStore != nil {
			namespaces.Run(ctx, nsStore, nsLog)
		}
	})
	etcd := newEtcdMonitor(st.store.Healthy, cfg.Logger)
	s, err := cfg.Complete().New()
	if err != nil {
		return fmt.Errorf("creating the server: %w", err)
	}
	a.server = s
	return errors.Join(
		caches.register(s.Registry(), st.store),
		s.AddHealthChecks(healthz.NamedCheck("etcd", func(r *http.Request) error { return st.store.Healthy(r.Context()) })),
		s.AddPostStartHook("start-watch-caches", func(ctx context.Context) error {
			caches.start(ctx, cfg.Logger)
			bg.goRun(func() { memreturn.Run(ctx, memreturn.Default) })
			bg.goRun(func() {
				select {
				case <-a.ready():
				case <-ctx.Done():
				}
				relaxed()
			})
			return nil
		}),
		s.AddPostStartHook("storage-readiness", caches.waitReady),
		s.AddPostStartHook("default-namespaces", a.rest.EnsureDefaultNamespaces),
		s.AddPostStartHook("start-etcd-compactor", func(ctx context.Context) error {
			st.store.StartCompactor(ctx)
			return nil
		}),
		etcd.register(s.Registry()),
		s.AddPostStartHook("start-etcd-monitor", func(ctx context.Context) error {
			bg.goRun(func() { etcd.run(ctx) })
			return nil
		}),
		a.addSpaceGuard(),
		a.addEncryptionReload(),
		s.AddPostShutdownHook("close-storage", func(ctx context.Context) error {
			bg.wait()
			caches.wait()
			return st.close(ctx)
		}),
	)
}

// addHooks adds the hooks and controllers of the API's groups, in the order they start.
func (a *assembly) addHooks() error {
	if err := a.addServiceAccountHooks(); err != nil {
		return err
	}
	if err := a.addCRDHooks(); err != nil {
		return err
	}
	var err error
	if a.cl, err = newClients(a.server, a.cfg.API, a.caches, &a.bg); err != nil {
		return err
	}
	for _, add := range []func() error{
		a.addPriorityAndFairness,
		a.addAdmission,
		a.addAggregation,
		a.addAPIServiceHooks,
		a.addDefaultServiceCIDR,
		a.addKubernetesService,
		func() error { a.addEndpointControllers(); return nil },
		a.addKindControllers,
		a.addGarbageCollector,
		a.addEtcdSnapshots,
		a.addStatusEndpoint,
		a.addClusterControllers,
	} {
		if err := add(); err != nil {
			return err
		}
	}
	return nil
}

// startLiveHeapMax is the live heap up to which the start keeps the collector relaxed: a start
// holds about 10 MB live; one that fills caches of many built-in objects goes back to GOGC's pace
// rather than let its heap grow to five times theirs.
const startLiveHeapMax = 32 << 20

func closeListeners(cfg *serve.Config) {
	if cfg.SecureServing != nil && cfg.SecureServing.Listener != nil {
		cfg.SecureServing.Listener.Close()
	}
	if cfg.InsecureServing != nil && cfg.InsecureServing.Listener != nil {
		cfg.InsecureServing.Listener.Close()
	}
}
