package rbac

import (
	"context"

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
