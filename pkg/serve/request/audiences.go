package request

import "context"

type audiencesKey struct{}

// WithAudiences returns ctx asking token authenticators to accept tokens for audiences (a
// TokenReview's spec.audiences, else the API's), as kube's authenticator.WithAudiences does.
func WithAudiences(ctx context.Context, audiences []string) context.Context {
	return context.WithValue(ctx, audiencesKey{}, audiences)
}

// AudiencesFrom returns the audiences a caller asked for; none means the API's own.
func AudiencesFrom(ctx context.Context) ([]string, bool) {
	a, ok := ctx.Value(audiencesKey{}).([]string)
	return a, ok
}
