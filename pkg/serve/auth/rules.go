package auth

import (
	"context"
	"errors"

	authorizationv1 "k8s.io/api/authorization/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"

	"github.com/apictl/apictl/pkg/serve/request"
)

// Rules are what a user may do in a namespace, as a SelfSubjectRulesReview reports them.
type Rules struct {
	Resource    []authorizationv1.ResourceRule
	NonResource []authorizationv1.NonResourceRule
	// Incomplete says that a mode could not list everything it would allow.
	Incomplete bool
}

// RulesResolver is an authorizer that can list the rules it applies to a user, as kube's
// authorizer.RuleResolver does.
type RulesResolver interface {
	RulesFor(ctx context.Context, u *request.User, namespace string) (Rules, error)
}

// everything is the rule set of a mode that allows everything.
func everything() Rules {
	return Rules{
		Resource:    []authorizationv1.ResourceRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}},
		NonResource: []authorizationv1.NonResourceRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}},
	}
}

// RulesFor of AlwaysAllow is everything.
func (alwaysAllow) RulesFor(context.Context, *request.User, string) (Rules, error) {
	return everything(), nil
}

// RulesFor of AlwaysDeny is nothing.
func (alwaysDeny) RulesFor(context.Context, *request.User, string) (Rules, error) {
	return Rules{}, nil
}

// RulesFor lists the policies that apply to u in namespace, one rule each, as kube's ABAC does:
// read-only policies give get, list and watch, the others every verb.
func (a *ABAC) RulesFor(_ context.Context, u *request.User, namespace string) (Rules, error) {
	var out Rules
	for i := range a.policies {
		p := &a.policies[i]
		if u == nil || !p.subjectMatches(u) || (p.Namespace != "*" && p.Namespace != namespace) {
			continue
		}
		verbs := []string{"*"}
		if p.Readonly {
			verbs = []string{"get", "list", "watch"}
		}
		if p.Resource != "" {
			out.Resource = append(out.Resource, authorizationv1.ResourceRule{Verbs: verbs, APIGroups: []string{p.APIGroup}, Resources: []string{p.Resource}})
		}
		if p.NonResourcePath != "" {
			out.NonResource = append(out.NonResource, authorizationv1.NonResourceRule{Verbs: verbs, NonResourceURLs: []string{p.NonResourcePath}})
		}
	}
	return out, nil
}

// RulesFor joins the rules of every mode that can list them, as kube's union rule resolver does: a
// mode that cannot makes the answer incomplete, and the errors are joined as an aggregate prints them.
// The system:masters bypass lists nothing, as in kube: its members see the rules their bindings give.
func (c *AuthorizerChain) RulesFor(ctx context.Context, u *request.User, namespace string) (Rules, error) {
	var out Rules
	var errs []error
	for _, m := range c.modes {
		r, ok := unwrap(m).(RulesResolver)
		if !ok {
			out.Incomplete = true
			continue
		}
		rules, err := r.RulesFor(ctx, u, namespace)
		if err != nil {
			errs = append(errs, err)
		}
		out.Resource = append(out.Resource, rules.Resource...)
		out.NonResource = append(out.NonResource, rules.NonResource...)
		out.Incomplete = out.Incomplete || rules.Incomplete
	}
	if len(errs) == 0 {
		return out, nil
	}
	return out, utilerrors.NewAggregate(errs)
}

var (
	_ RulesResolver = alwaysAllow{}
	_ RulesResolver = alwaysDeny{}
	_ RulesResolver = (*ABAC)(nil)
	_ RulesResolver = (*AuthorizerChain)(nil)
)

// errNoRules is what a chain without a rules resolver answers.
var errNoRules = errors.New("the authorizer cannot list rules")

// ResolveRules lists u's rules in namespace through a, when a can list them.
func ResolveRules(ctx context.Context, a Authorizer, u *request.User, namespace string) (Rules, error) {
	if r, ok := unwrap(a).(RulesResolver); ok {
		return r.RulesFor(ctx, u, namespace)
	}
	return Rules{Incomplete: true}, errNoRules
}
