package apiserver

import (
	"context"
	"fmt"
	"sync"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apictl/apictl/pkg/controllers/clusterroleaggregation"
	"github.com/apictl/apictl/pkg/routes"
	"github.com/apictl/apictl/pkg/serve/auth"
	"github.com/apictl/apictl/pkg/serve/auth/rbac"
	"github.com/apictl/apictl/pkg/storage"
)

// rbacPolicy is the policy of the RBAC authorizer among the configured modes (true), or a policy of
// its own when RBAC is not a mode (false): escalation checks and the aggregation controller read it
// either way.
func rbacPolicy(a auth.Authorizer) (*rbac.Policy, bool) {
	if chain, ok := a.(*auth.AuthorizerChain); ok {
		for _, m := range chain.Modes() {
			if n, ok := m.(*auth.Named); ok {
				m = n.Unwrap()
			}
			if r, ok := m.(*rbac.Authorizer); ok {
				return r.Policy(), true
			}
		}
	}
	return rbac.NewPolicy(), false
}

// rbacStores are the watch caches the policy reads; false when rbac.authorization.k8s.io is not
// served (--runtime-config turned it off).
func rbacStores(caches *watchCaches) (rbac.Stores, bool) {
	var st rbac.Stores
	for _, f := range []struct {
		resource string
		dst      *storage.Store
	}{
		{rbac.ResourceRoles, &st.Roles},
		{rbac.ResourceClusterRoles, &st.ClusterRoles},
		{rbac.ResourceRoleBindings, &st.RoleBindings},
		{rbac.ResourceClusterRoleBindings, &st.ClusterRoleBindings},
	} {
		s, ok := caches.byResource[schema.GroupResource{Group: rbacv1.GroupName, Resource: f.resource}]
		if !ok {
			return rbac.Stores{}, false
		}
		*f.dst = s
	}
	return st, true
}

// background runs the server's long-lived goroutines (the RBAC policy feed, controllers) and lets
// shutdown wait for them before storage closes.
type background struct {
	wg sync.WaitGroup
}

func (b *background) goRun(fn func()) {
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		fn()
	}()
}

func (b *background) wait() { b.wg.Wait() }

// addRBACHooks starts what RBAC needs with the server, in kube's rbac/bootstrap-roles hook: the
// policy index fed from the watch caches and the default policy, on every replica as kube-apiserver
// has them. The hook finishes, and /readyz turns green, once the index holds the default policy; the
// index runs until the server stops, and shutdown waits for it. The clusterrole-aggregation
// controller is kube-controller-manager's: it runs once per cluster, under the Lease (ctrls).
func (a *assembly) addRBACHooks(policy *rbac.Policy, stores rbac.Stores) error {
	s, cfg, resources, bg, ctrls := a.server, a.cfg, a.rest, &a.bg, &a.ctrls
	lb, err := newLoopback(cfg.API, resources)
	if err != nil {
		return fmt.Errorf("building the loopback client: %w", err)
	}
	cs, err := lb.rbacClient()
	if err != nil {
		return fmt.Errorf("building the loopback client: %w", err)
	}
	// kube's Roles in kube-system need the namespaces API, to create kube-system if it is missing.
	_, namespacesServed := cfg.API.Resource(routes.GroupCore, "v1", "namespaces")
	ctrls.add("clusterrole-aggregation-controller", func(ctx context.Context) {
		select {
		case <-policy.Ready():
			clusterroleaggregation.New(policy, cs, cfg.Logger).Run(ctx)
		case <-ctx.Done():
		}
	})
	return s.AddPostStartHook("rbac/bootstrap-roles", func(ctx context.Context) error {
		// The reconciliation sends its requests with context.TODO: bound to the hook's context,
		// they end with the server, answered or not (a shutdown with etcd gone waited on them).
		bound := lb.boundTo(ctx)
		bcs, err := bound.rbacClient()
		if err != nil {
			return fmt.Errorf("building the loopback client: %w", err)
		}
		bg.goRun(func() { policy.Run(ctx, stores, cfg.Logger.With("component", "rbac-policy")) })
		if namespacesServed {
			core, err := bound.coreClient()
			if err != nil {
				return fmt.Errorf("building the loopback client: %w", err)
			}
			bg.goRun(func() { bootstrapNamespacePolicy(ctx, bcs, core.Namespaces(), cfg.Logger) })
		}
		return bootstrapRBAC(ctx, bcs, policy, cfg.Logger)
	})
}
