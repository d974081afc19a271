package admission

import (
	"context"

	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/apictl/apictl/pkg/serve/auth"
	"github.com/apictl/apictl/pkg/serve/request"
)

// reviewer is an authorizer that tells "no opinion" from "denied" and gives the deciding mode's
// reason for an Allow too (auth.AuthorizerChain), as kube's union authorizer does.
type reviewer interface {
	Review(ctx context.Context, u *request.User, info *request.RequestInfo) (auth.Decision, string, error)
}

// KubeAuthorizer adapts apictl's authorizer to k8s.io/apiserver's, for the CEL `authorizer` variable
// of admission policies and webhook matchConditions. It answers as kube's union authorizer would:
// NoOpinion when no mode decided, and the deciding mode's reason, so that `allowed()`, `denied()` and
// `reason()` read the same as in kube. A nil a has no opinion on anything.
func KubeAuthorizer(a auth.Authorizer) authorizer.Authorizer {
	return authorizer.AuthorizerFunc(func(ctx context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
		if a == nil {
			return authorizer.DecisionNoOpinion, "", nil
		}
		u, info := requestOf(attrs)
		var d auth.Decision
		var reason string
		var err error
		if r, ok := a.(reviewer); ok {
			d, reason, err = r.Review(ctx, u, info)
		} else {
			d, reason, err = a.Authorize(ctx, u, info)
		}
		return kubeDecision(d), reason, err
	})
}

// requestOf maps kube's attributes to what apictl's authorizers read. Field and label selectors are
// left out: no authorizer here reads them.
func requestOf(attrs authorizer.Attributes) (*request.User, *request.RequestInfo) {
	u := &request.User{}
	if ui := attrs.GetUser(); ui != nil {
		u.Name, u.UID, u.Groups = ui.GetName(), ui.GetUID(), ui.GetGroups()
		if extra := ui.GetExtra(); len(extra) > 0 {
			u.Extra = make(map[string][]string, len(extra))
			for k, v := range extra {
				u.Extra[k] = v
			}
		}
	}
	if !attrs.IsResourceRequest() {
		return u, &request.RequestInfo{Path: attrs.GetPath(), Verb: attrs.GetVerb()}
	}
	return u, &request.RequestInfo{
		IsResourceRequest: true,
		Path:              attrs.GetPath(),
		Verb:              attrs.GetVerb(),
		APIGroup:          attrs.GetAPIGroup(),
		APIVersion:        attrs.GetAPIVersion(),
		Namespace:         attrs.GetNamespace(),
		Resource:          attrs.GetResource(),
		Subresource:       attrs.GetSubresource(),
		Name:              attrs.GetName(),
	}
}

func kubeDecision(d auth.Decision) authorizer.Decision {
	switch d {
	case auth.Allow:
		return authorizer.DecisionAllow
	case auth.Deny:
		return authorizer.DecisionDeny
	default:
		return authorizer.DecisionNoOpinion
	}
}
