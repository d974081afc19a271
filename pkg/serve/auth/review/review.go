// Package review answers kube's review APIs, whose objects are never stored: TokenReview and
// SelfSubjectReview (authentication.k8s.io/v1), SubjectAccessReview, LocalSubjectAccessReview,
// SelfSubjectAccessReview and SelfSubjectRulesReview (authorization.k8s.io/v1). Each is a
// handlers.Creater: the handlers decode the body and send the answer; this package asks the server's
// authenticator and authorizer, with kube's validation and messages.
package review

import (
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"

	"github.com/apictl/apictl/pkg/serve/auth"
	"github.com/apictl/apictl/pkg/serve/handlers"
)

// Config is what the reviews ask.
type Config struct {
	// Authentication is the secure port's authenticator; TokenReview runs it on the token alone.
	Authentication auth.Authenticator
	// Authorization is the secure port's authorizer chain; access reviews ask it.
	Authorization auth.Authorizer
	// APIAudiences are the audiences a TokenReview without spec.audiences checks tokens for
	// (kube's --api-audiences); empty means any.
	APIAudiences []string
	// Now is the clock of SelfSubjectReview's creationTimestamp; nil means time.Now.
	Now func() time.Time
}

// Creaters returns the create handlers of the six review resources.
func Creaters(cfg Config) map[handlers.CreateKey]handlers.Creater {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Authorization == nil {
		// What serve.Config.Complete gives a server without one.
		cfg.Authorization = auth.Chain(auth.AlwaysAllow)
	}
	r := &reviews{cfg: cfg}
	authn := func(resource string) handlers.CreateKey {
		return handlers.CreateKey{Group: authenticationv1.GroupName, Version: "v1", Resource: resource}
	}
	authz := func(resource string) handlers.CreateKey {
		return handlers.CreateKey{Group: authorizationv1.GroupName, Version: "v1", Resource: resource}
	}
	return map[handlers.CreateKey]handlers.Creater{
		authn("tokenreviews"):              r.tokenReview,
		authn("selfsubjectreviews"):        r.selfSubjectReview,
		authz("subjectaccessreviews"):      r.subjectAccessReview,
		authz("localsubjectaccessreviews"): r.localSubjectAccessReview,
		authz("selfsubjectaccessreviews"):  r.selfSubjectAccessReview,
		authz("selfsubjectrulesreviews"):   r.selfSubjectRulesReview,
	}
}

// reviews answers the review resources.
type reviews struct {
	cfg Config
}
