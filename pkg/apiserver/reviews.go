package apiserver

import (
	"github.com/apictl/apictl/pkg/serve"
	"github.com/apictl/apictl/pkg/serve/auth/review"
	"github.com/apictl/apictl/pkg/serve/handlers"
)

// reviewCreaters answers the review APIs with the secure port's authenticator and authorizer, and
// the API's audiences (--api-audiences, which default to the service-account issuer) for a
// TokenReview that names none, as kube's TokenReview storage is given.
func reviewCreaters(cfg *serve.Config) map[handlers.CreateKey]handlers.Creater {
	rc := review.Config{Authentication: cfg.Authentication, Authorization: cfg.Authorization}
	if cfg.ServiceAccountTokens != nil {
		rc.APIAudiences = cfg.ServiceAccountTokens.Audiences()
	}
	return review.Creaters(rc)
}
