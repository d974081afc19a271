package apiserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	rbacv1client "k8s.io/client-go/kubernetes/typed/rbac/v1"
	"k8s.io/component-helpers/auth/rbac/reconciliation"

	"github.com/apictl/apictl/pkg/serve/auth/rbac"
)

// bootstrapNamespacePolicy reconciles kube's default Roles and RoleBindings (in kube-system:
// extension-apiserver-authentication-reader and its binding) as bootstrapRBAC does the cluster
// ones, creating the namespace if it is missing, and retries every second until it succeeds or ctx
// ends. It does not hold /readyz: kube-system is created by another hook, and a server whose
// namespaced defaults are late still enforces the cluster-wide policy. Its objects are logged at
// debug level only, outside the start's summary line: that line comes before readiness, and these
// may be reconciled after it.
func bootstrapNamespacePolicy(ctx context.Context, cs rbacv1client.RbacV1Interface, namespaces corev1client.NamespaceInterface, log *slog.Logger) {
	log = log.With("component", "rbac-bootstrap")
	for {
		err := reconcileNamespacePolicy(cs, namespaces, log)
		if err == nil {
			return
		}
		log.Debug("reconciling the default namespaced RBAC policy failed; retrying", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

func reconcileNamespacePolicy(cs rbacv1client.RbacV1Interface, namespaces corev1client.NamespaceInterface, log *slog.Logger) error {
	var errs []error
	for _, roles := range rbac.BootstrapNamespaceRoles() {
		for _, r := range roles {
			opts := reconciliation.ReconcileRoleOptions{
				Role:    reconciliation.RoleRuleOwner{Role: &r},
				Client:  reconciliation.RoleModifier{Client: cs, NamespaceClient: namespaces},
				Confirm: true,
			}
			res, err := opts.Run()
			if err != nil {
				errs = append(errs, fmt.Errorf("role %s/%s: %w", r.Namespace, r.Name, err))
				continue
			}
			logResult(log, nil, "role", r.Namespace+"/"+r.Name, res.Operation, res.Protected, len(res.MissingRules) > 0)
		}
	}
	for _, bindings := range rbac.BootstrapNamespaceRoleBindings() {
		for _, b := range bindings {
			opts := reconciliation.ReconcileRoleBindingOptions{
				RoleBinding: reconciliation.RoleBindingAdapter{RoleBinding: &b},
				Client:      reconciliation.RoleBindingClientAdapter{Client: cs, NamespaceClient: namespaces},
				Confirm:     true,
			}
			res, err := opts.Run()
			if err != nil {
				errs = append(errs, fmt.Errorf("rolebinding %s/%s: %w", b.Namespace, b.Name, err))
				continue
			}
			logResult(log, nil, "rolebinding", b.Namespace+"/"+b.Name, res.Operation, res.Protected, len(res.MissingSubjects) > 0)
		}
	}
	return errors.Join(errs...)
}
