package rbac

import (
	"context"

	authorizationv1 "k8s.io/api/authorization/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"

	"github.com/apictl/apictl/pkg/serve/auth"
	"github.com/apictl/apictl/pkg/serve/request"
)

// Authorizer is --authorization-mode RBAC: it allows what a binding grants and has no opinion on the
// rest, giving kube's reason when a binding names a role that is not there.
type Authorizer struct {
	policy *Policy
}

var _ auth.Authorizer = (*Authorizer)(nil)

// New returns an authorizer over its own Policy, which grants nothing until the server runs it.
func New() *Authorizer { return &Authorizer{policy: NewPolicy()} }

// Policy is the index the authorizer decides from; the server feeds it.
func (a *Authorizer) Policy() *Policy { return a.policy }

// Authorize allows u what info asks if any binding grants it.
func (a *Authorizer) Authorize(_ context.Context, u *request.User, info *request.RequestInfo) (auth.Decision, string, error) {
	if u == nil {
		return auth.NoOpinion, "", nil
	}
	x := a.policy.current.Load()
	if x.allows(u, info) {
		return auth.Allow, "", nil
	}
	return auth.NoOpinion, x.denialReason(u, info.Namespace), nil
}

// AuthorizeExplained decides as Authorize does and names, for an Allow, the binding that grants it,
// as kube's RBAC reason does; access reviews show it.
func (a *Authorizer) AuthorizeExplained(ctx context.Context, u *request.User, info *request.RequestInfo) (auth.Decision, string, error) {
	d, reason, err := a.Authorize(ctx, u, info)
	if d == auth.Allow {
		reason = a.policy.current.Load().allowReason(u, info)
	}
	return d, reason, err
}

// RulesFor lists the rules the bindings give u in namespace, as kube's RBAC rule resolver does: a rule
// with resources becomes a resource rule and one with URLs a non-resource rule; the errors met
// resolving roles are the evaluation error.
func (a *Authorizer) RulesFor(_ context.Context, u *request.User, namespace string) (auth.Rules, error) {
	var out auth.Rules
	if u == nil {
		return out, nil
	}
	rules, errs := a.policy.RulesFor(u, namespace)
	for _, r := range rules {
		if len(r.Resources) > 0 {
			out.Resource = append(out.Resource, authorizationv1.ResourceRule{Verbs: r.Verbs, APIGroups: r.APIGroups, Resources: r.Resources, ResourceNames: r.ResourceNames})
		}
		if len(r.NonResourceURLs) > 0 {
			out.NonResource = append(out.NonResource, authorizationv1.NonResourceRule{Verbs: r.Verbs, NonResourceURLs: r.NonResourceURLs})
		}
	}
	return out, utilerrors.NewAggregate(errs)
}

var (
	_ auth.Explainer     = (*Authorizer)(nil)
	_ auth.RulesResolver = (*Authorizer)(nil)
)
