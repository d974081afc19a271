package apiserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	rbacv1client "k8s.io/client-go/kubernetes/typed/rbac/v1"
	"k8s.io/component-helpers/auth/rbac/reconciliation"

	"github.com/apictl/apictl/pkg/serve/auth/rbac"
)

// bootstrapRBAC reconciles kube's default ClusterRoles and ClusterRoleBindings with what is stored,
// as kube's rbac/bootstrap-roles hook does at every start: missing objects are created, missing rules,
// selectors and subjects added, nothing an administrator added is removed, and objects annotated
// rbac.authorization.kubernetes.io/autoupdate: "false" are left alone. It retries until it succeeds
// or ctx ends, then waits until the RBAC index holds the defaults, so that /readyz turns green with
// the default policy in force.
func bootstrapRBAC(ctx context.Context, cs rbacv1client.RbacV1Interface, policy *rbac.Policy, log *slog.Logger) error {
	log = log.With("component", "rbac-bootstrap")
	var tally bootstrapTally
	for {
		err := reconcileBootstrapPolicy(cs, &tally, log)
		if err == nil {
			tally.log(log)
			break
		}
		log.Warn("reconciling the default RBAC policy failed; retrying", "err", err)
		select {
		case <-ctx.Done():
			return fmt.Errorf("reconciling the default RBAC policy: %w", errors.Join(err, ctx.Err()))
		case <-time.After(time.Second):
		}
	}
	var roles, bindings []string
	for _, r := range rbac.BootstrapClusterRoles() {
		roles = append(roles, r.Name)
	}
	for _, b := range rbac.BootstrapClusterRoleBindings() {
		bindings = append(bindings, b.Name)
	}
	for {
		// The channel is taken before the index is read: an index published between the two would
		// otherwise close a channel this loop never sees and leave it waiting for a change that may
		// never come (CI once waited out its 30 s that way).
		changed := policy.Changed()
		if policy.Holds(roles, bindings) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the RBAC index to hold the default policy: %w", ctx.Err())
		case <-changed:
		}
	}
}

// reconcileBootstrapPolicy reconciles every default object at once: each is independent, and etcd
// commits concurrent writes in shared fsyncs, so a first start pays for a few instead of fourteen
// (the rbac/bootstrap-roles hook took 218 ms one after another).
func reconcileBootstrapPolicy(cs rbacv1client.RbacV1Interface, tally *bootstrapTally, log *slog.Logger) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	run := func(kind, name string, reconcile func() error) {
		wg.Go(func() {
			if err := reconcile(); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("%s %s: %w", kind, name, err))
				mu.Unlock()
			}
		})
	}
	for _, r := range rbac.BootstrapClusterRoles() {
		run("clusterrole", r.Name, func() error {
			opts := reconciliation.ReconcileRoleOptions{
				Role:    reconciliation.ClusterRoleRuleOwner{ClusterRole: &r},
				Client:  reconciliation.ClusterRoleModifier{Client: cs.ClusterRoles()},
				Confirm: true,
			}
			res, err := opts.Run()
			if err == nil {
				logResult(log, tally, "clusterrole", r.Name, res.Operation, res.Protected, len(res.MissingRules) > 0 || len(res.MissingAggregationRuleSelectors) > 0)
			}
			return err
		})
	}
	for _, b := range rbac.BootstrapClusterRoleBindings() {
		run("clusterrolebinding", b.Name, func() error {
			opts := reconciliation.ReconcileRoleBindingOptions{
				RoleBinding: reconciliation.ClusterRoleBindingAdapter{ClusterRoleBinding: &b},
				Client:      reconciliation.ClusterRoleBindingClientAdapter{Client: cs.ClusterRoleBindings()},
				Confirm:     true,
			}
			res, err := opts.Run()
			if err == nil {
				logResult(log, tally, "clusterrolebinding", b.Name, res.Operation, res.Protected, len(res.MissingSubjects) > 0)
			}
			return err
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// logResult logs one object's reconciliation at debug level, where a line per object belongs (a
// first start creates twenty), and counts it in tally when there is one. An object left alone
// because of its annotation stays a warning: the server then enforces less than kube's defaults.
func logResult(log *slog.Logger, tally *bootstrapTally, kind, name string, op reconciliation.ReconcileOperation, protected, missing bool) {
	switch {
	case protected && missing:
		log.Warn("a default RBAC object lacks defaults but is annotated rbac.authorization.kubernetes.io/autoupdate=false; left as it is",
			"kind", kind, "name", name)
	case op == reconciliation.ReconcileCreate:
		tally.count(op)
		log.Debug("created a default RBAC object", "kind", kind, "name", name)
	case op == reconciliation.ReconcileUpdate || op == reconciliation.ReconcileRecreate:
		tally.count(op)
		log.Debug("updated a default RBAC object", "kind", kind, "name", name, "operation", string(op))
	}
}

// bootstrapTally counts what the reconciliation of the default cluster RBAC objects did, across
// its retries, for the one line a start logs about them.
type bootstrapTally struct {
	created, updated atomic.Int32
}

// count counts one object's operation; a nil tally counts nothing.
func (t *bootstrapTally) count(op reconciliation.ReconcileOperation) {
	switch {
	case t == nil:
	case op == reconciliation.ReconcileCreate:
		t.created.Add(1)
	case op == reconciliation.ReconcileUpdate || op == reconciliation.ReconcileRecreate:
		t.updated.Add(1)
	}
}

// log writes the summary: at Info when something was written, so that an operator sees the
// policy change once; at debug level when every object was already as kube defines it, as on
// every start after the first.
func (t *bootstrapTally) log(log *slog.Logger) {
	created, updated := t.created.Load(), t.updated.Load()
	switch {
	case created == 0 && updated == 0:
		log.Debug("the default ClusterRoles and ClusterRoleBindings are up to date")
	case updated == 0:
		log.Info(fmt.Sprintf("created %d default ClusterRoles and ClusterRoleBindings", created))
	case created == 0:
		log.Info(fmt.Sprintf("updated %d default ClusterRoles and ClusterRoleBindings", updated))
	default:
		log.Info(fmt.Sprintf("created %d and updated %d default ClusterRoles and ClusterRoleBindings", created, updated))
	}
}
