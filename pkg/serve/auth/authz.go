package auth

import (
	"context"
	"fmt"

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
var AlwaysAllow Authorizer = AuthorizerFunc(func(context.Context, *request.User, *request.RequestInfo) (Decision, string, error) {
	return Allow, "", nil
})

// AlwaysDeny denies everything.
var AlwaysDeny Authorizer = AuthorizerFunc(func(context.Context, *request.User, *request.RequestInfo) (Decision, string, error) {
	return Deny, "Everything is forbidden.", nil
})

// privilegedGroup allows system:masters everything, before any configured mode is asked, as kube does.
var privilegedGroup Authorizer = AuthorizerFunc(func(_ context.Context, u *request.User, _ *request.RequestInfo) (Decision, string, error) {
	if u != nil && u.InGroup(request.GroupMasters) {
		return Allow, "", nil
	}
	return NoOpinion, "", nil
})

// Chain asks system:masters' authorizer and then each mode in --authorization-mode order; the first
// Allow or Deny decides, and no opinion at all is a denial.
func Chain(modes ...Authorizer) Authorizer {
	all := append([]Authorizer{privilegedGroup}, modes...)
	return AuthorizerFunc(func(ctx context.Context, u *request.User, info *request.RequestInfo) (Decision, string, error) {
		var reasons []string
		for _, a := range all {
			d, reason, err := a.Authorize(ctx, u, info)
			if err != nil {
				return Deny, "", err
			}
			if d != NoOpinion {
				return d, reason, nil
			}
			if reason != "" {
				reasons = append(reasons, reason)
			}
		}
		if len(reasons) > 0 {
			return Deny, fmt.Sprint(reasons), nil
		}
		return Deny, "", nil
	})
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
