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

type matchedAudiencesKey struct{}

// MatchedAudiences receives, from an authenticator that checks audiences (service-account tokens),
// which of the audiences asked for the token was issued for: TokenReview answers those in
// status.audiences, as kube does. Authenticators that ignore audiences (static tokens) report
// nothing, and the review answers the audiences asked for.
type MatchedAudiences struct {
	Audiences []string
	Reported  bool
}

// WithMatchedAudiences returns ctx in which ReportMatchedAudiences fills m.
func WithMatchedAudiences(ctx context.Context, m *MatchedAudiences) context.Context {
	return context.WithValue(ctx, matchedAudiencesKey{}, m)
}

// ReportMatchedAudiences records audiences in ctx's MatchedAudiences, if it has one.
func ReportMatchedAudiences(ctx context.Context, audiences []string) {
	if m, ok := ctx.Value(matchedAudiencesKey{}).(*MatchedAudiences); ok {
		m.Audiences, m.Reported = audiences, true
	}
}
