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

// New builds a prepared server from completed and validated options, logging to logOut.
func New(ctx context.Context, o *flags.ServerOptions, logOut io.Writer, extras Extras) (_ *serve.PreparedServer, err error) {
	// Until the server is ready, the collector lets the heap grow more between collections, unless
	// the start fills large caches (pkg/gcrelax says why).
	relaxed := gcrelax.HoldWhileSmall(startLiveHeapMax)
	defer func() {
		if err != nil {
			relaxed()
		}
	}()
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
	defer func() {
		if err != nil {
			_ = st.close(context.Background())
		}
	}()
	// The manifests' CRDs are created through the API once the server runs; what would refuse them
	// there is said now, before anything starts serving.
	_, compileErr := crschema.NewSet(crds)
	if err := errors.Join(compileErr, crschema.CheckRules(crds)); err != nil {
		return nil, fmt.Errorf("compiling the CRD schemas: %w", err)
	}
	reg, err := registry.New(cfg.API)
	if err != nil {
		return nil, fmt.Errorf("building the rules of the API's kinds: %w", err)
	}
	caches, err := newWatchCaches(cfg.API, st.store, o.Generic.StorageInitializationTimeout, cfg.Logger)
	if err != nil {
		return nil, err
	}
	cfg.ListStoredBytes = caches.storedBytes
	policy, rbacMode := rbacPolicy(cfg.Authorization)
	policyStores, rbacServed := rbacStores(caches)
	if rbacMode && !rbacServed {
		return nil, errors.New("--authorization-mode RBAC needs the rbac.authorization.k8s.io/v1 API: do not turn it off in --runtime-config")
	}
	var escalation handlers.EscalationChecker
	if rbacServed {
		escalation = &rbac.Escalation{Policy: policy, Authorizer: cfg.Authorization}
	}
	stores, err := withServiceAllocation(ctx, o, caches.byResource, st.store, cfg.Logger)
	if err != nil {
		return nil, err
	}
	rest, err := handlers.New(handlers.Config{
		API:               cfg.API,
		Registry:          reg,
		Store:             st.store,
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
		return nil, err
	}
	cfg.Resources = rest
	if extras.Adjust != nil {
		extras.Adjust(cfg)
	}
	var bg background
	var prepared *serve.PreparedServer // the hooks run once it is set
	// The controllers that run once per cluster, on the holder of the leader election Lease.
	ctrls := clusterControllers{enabled: o.Controllers.Enabled}
	ctrls.add("namespace-controller", rest.RunNamespaceController)
	etcd := newEtcdMonitor(st.store.Healthy, cfg.Logger)
	s, err := cfg.Complete().New()
	if err != nil {
		return nil, fmt.Errorf("creating the server: %w", err)
	}
	err = errors.Join(
		caches.register(s.Registry(), st.store),
		s.AddHealthChecks(healthz.NamedCheck("etcd", func(r *http.Request) error { return st.store.Healthy(r.Context()) })),
		s.AddPostStartHook("start-watch-caches", func(ctx context.Context) error {
			caches.start(ctx, cfg.Logger)
			bg.goRun(func() { memreturn.Run(ctx, memreturn.Default) })
			bg.goRun(func() {
				select {
				case <-prepared.Ready():
				case <-ctx.Done():
				}
				relaxed()
			})
			return nil
		}),
		s.AddPostStartHook("storage-readiness", caches.waitReady),
		s.AddPostStartHook("default-namespaces", rest.EnsureDefaultNamespaces),
		s.AddPostStartHook("start-etcd-compactor", func(ctx context.Context) error {
			st.store.StartCompactor(ctx)
			return nil
		}),
		etcd.register(s.Registry()),
		s.AddPostStartHook("start-etcd-monitor", func(ctx context.Context) error {
			bg.goRun(func() { etcd.run(ctx) })
			return nil
		}),
		addSpaceGuard(s, st.space, &bg),
		addEncryptionReload(s, o, st.encryption, cfg.Logger, &bg),
		s.AddPostShutdownHook("close-storage", func(ctx context.Context) error {
			bg.wait()
			caches.wait()
			return st.close(ctx)
		}),
	)
	if err != nil {
		return nil, err
	}
	if rbacServed {
		if err := addRBACHooks(s, cfg, rest, &bg, &ctrls, policy, policyStores); err != nil {
			return nil, err
		}
	}
	if err := addServiceAccountHooks(s, cfg, o, rest, caches, &ctrls); err != nil {
		return nil, err
	}
	if err := addCRDHooks(s, cfg, rest, caches, st.store, crds, &bg, &ctrls); err != nil {
		return nil, err
	}
	cl, err := newClients(s, cfg.API, caches, &bg)
	if err != nil {
		return nil, err
	}
	if err := addPriorityAndFairness(s, cfg, cl, caches, &bg); err != nil {
		return nil, err
	}
	if err := addAdmission(s, cfg, rest, cl, caches); err != nil {
		return nil, err
	}
	if err := addAggregation(s, cfg, o, cl, &bg); err != nil {
		return nil, err
	}
	if err := addAPIServiceHooks(s, cfg, o, cl, &bg, &ctrls); err != nil {
		return nil, err
	}
	if err := addDefaultServiceCIDR(s, cfg, o, cl, &bg); err != nil {
		return nil, err
	}
	if err := addKubernetesService(s, cfg, o, cl, st.store, &bg, func() <-chan struct{} { return prepared.Ready() }); err != nil {
		return nil, err
	}
	addEndpointControllers(cfg, cl, &ctrls)
	if err := addKindControllers(cfg, cl, &ctrls, o.Signing.Effective()); err != nil {
		return nil, err
	}
	if err := addGarbageCollector(s, cfg, cl, caches, &ctrls); err != nil {
		return nil, err
	}
	if err := addEtcdSnapshots(s, cfg, o, &ctrls); err != nil {
		return nil, err
	}
	if err := addStatusEndpoint(s, o, st, caches, cl); err != nil {
		return nil, err
	}
	if err := addClusterControllers(s, cfg, o, cl, &ctrls, rest.EnsureDefaultNamespaces, &bg); err != nil {
		return nil, err
	}
	prepared = s.PrepareRun()
	return prepared, nil
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
