package auth

import (
	"context"
	"fmt"
	"strings"

	"github.com/apictl/apictl/pkg/serve/request"
)

// Decision is an authorizer's answer.
type Decision int

// Decisions. NoOpinion lets the next authorizer decide.
const (
	NoOpinion Decision = iota
	Allow
	Deny
)

// Authorizer decides whether user may do what info describes. reason is shown to the user on denial.
type Authorizer interface {
	Authorize(ctx context.Context, user *request.User, info *request.RequestInfo) (d Decision, reason string, err error)
}

// AuthorizerFunc adapts a function to Authorizer.
type AuthorizerFunc func(ctx context.Context, user *request.User, info *request.RequestInfo) (Decision, string, error)

// Authorize calls f.
func (f AuthorizerFunc) Authorize(ctx context.Context, user *request.User, info *request.RequestInfo) (Decision, string, error) {
	return f(ctx, user, info)
}

// AlwaysAllow allows everything.
var AlwaysAllow Authorizer = alwaysAllow{}

// AlwaysDeny denies everything.
var AlwaysDeny Authorizer = alwaysDeny{}

// alwaysAllow and alwaysDeny are types rather than functions so that they can list their rules too
// (rules.go).
type alwaysAllow struct{}

func (alwaysAllow) Authorize(context.Context, *request.User, *request.RequestInfo) (Decision, string, error) {
	return Allow, "", nil
}

type alwaysDeny struct{}

func (alwaysDeny) Authorize(context.Context, *request.User, *request.RequestInfo) (Decision, string, error) {
	return Deny, "Everything is forbidden.", nil
}

// privilegedGroup allows system:masters everything, before any configured mode is asked, as kube does.
var privilegedGroup Authorizer = AuthorizerFunc(func(_ context.Context, u *request.User, _ *request.RequestInfo) (Decision, string, error) {
	if u != nil && u.InGroup(request.GroupMasters) {
		return Allow, "", nil
	}
	return NoOpinion, "", nil
})

// AuthorizerChain asks system:masters' authorizer and then each mode in --authorization-mode order;
// the first Allow or Deny decides, with its own reason, and no opinion at all is a denial whose reason
// joins the reasons of the modes, each prefixed by the mode's name, one a line, as kube's union
// authorizer does.
type AuthorizerChain struct {
	modes []Authorizer
}

var _ Authorizer = (*AuthorizerChain)(nil)

// Chain returns the union of modes, behind the system:masters bypass.
func Chain(modes ...Authorizer) *AuthorizerChain {
	return &AuthorizerChain{modes: modes}
}

// Named is a mode with its name in the chain (kube's lower-cased mode: "rbac", "abac"), which prefixes
// the reasons it gives when it has no opinion, as kube's union authorizer does.
type Named struct {
	Name string
	Authorizer
}

// Unwrap returns the named authorizer.
func (n *Named) Unwrap() Authorizer { return n.Authorizer }

// Modes are the configured authorizers, in order, without the system:masters bypass: the server
// finds here the ones it must feed (RBAC's policy).
func (c *AuthorizerChain) Modes() []Authorizer { return c.modes }

// Authorize asks each authorizer in turn.
func (c *AuthorizerChain) Authorize(ctx context.Context, u *request.User, info *request.RequestInfo) (Decision, string, error) {
	d, reason, err := c.decide(ctx, u, info, false)
	if err != nil {
		return Deny, "", err
	}
	if d == NoOpinion {
		return Deny, reason, nil
	}
	return d, reason, nil
}

// Review answers an access review (SubjectAccessReview and its kin) as kube's union authorizer
// does: NoOpinion when no mode decided, so that the review tells "not allowed" from "denied", and the
// reason the deciding mode gives for an Allow (RBAC names the binding), which requests never need.
func (c *AuthorizerChain) Review(ctx context.Context, u *request.User, info *request.RequestInfo) (Decision, string, error) {
	return c.decide(ctx, u, info, true)
}

// Explainer is an authorizer that can say why it allows, at a cost requests should not pay.
type Explainer interface {
	// AuthorizeExplained decides as Authorize does, with a reason for an Allow too.
	AuthorizeExplained(ctx context.Context, user *request.User, info *request.RequestInfo) (Decision, string, error)
}

// decide asks system:masters' authorizer and then each mode; explained asks Explainers for their
// reasons. A mode's error ends the walk, as kube's union authorizer does.
func (c *AuthorizerChain) decide(ctx context.Context, u *request.User, info *request.RequestInfo, explained bool) (Decision, string, error) {
	if d, _, _ := privilegedGroup.Authorize(ctx, u, info); d == Allow {
		return Allow, "", nil
	}
	var reasons []string
	for _, a := range c.modes {
		var d Decision
		var reason string
		var err error
		if e, ok := unwrap(a).(Explainer); ok && explained {
			d, reason, err = e.AuthorizeExplained(ctx, u, info)
		} else {
			d, reason, err = a.Authorize(ctx, u, info)
		}
		if err != nil {
			return NoOpinion, "", err
		}
		if d != NoOpinion {
			return d, reason, nil
		}
		if reason != "" {
			if n, ok := a.(*Named); ok {
				reason = n.Name + ": " + reason
			}
			reasons = append(reasons, reason)
		}
	}
	return NoOpinion, strings.Join(reasons, "\n"), nil
}

// unwrap returns the authorizer under a Named one.
func unwrap(a Authorizer) Authorizer {
	if n, ok := a.(*Named); ok {
		return n.Authorizer
	}
	return a
}

// ForbiddenMessage is kube's explanation of a denial, without the resource prefix that the Status
// constructor adds.
func ForbiddenMessage(u *request.User, info *request.RequestInfo) string {
	name := ""
	if u != nil {
		name = u.Name
	}
	if !info.IsResourceRequest {
		return fmt.Sprintf("User %q cannot %s path %q", name, info.Verb, info.Path)
	}
	resource := info.Resource
	if info.Subresource != "" {
		resource += "/" + info.Subresource
	}
	if info.Namespace != "" {
		return fmt.Sprintf("User %q cannot %s resource %q in API group %q in the namespace %q", name, info.Verb, resource, info.APIGroup, info.Namespace)
	}
	return fmt.Sprintf("User %q cannot %s resource %q in API group %q at the cluster scope", name, info.Verb, resource, info.APIGroup)
}
