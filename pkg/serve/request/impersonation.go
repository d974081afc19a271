package request

import "context"

type impersonatorKey struct{}

// WithImpersonator returns ctx recording that the request's user (WithUser) is impersonated by u, the
// user who authenticated, so that audit and logs can name both, as kube's audit events do
// (user and impersonatedUser).
func WithImpersonator(ctx context.Context, u *User) context.Context {
	return context.WithValue(ctx, impersonatorKey{}, u)
}

// ImpersonatorFrom returns the user who authenticated, when the request impersonates another.
func ImpersonatorFrom(ctx context.Context) (*User, bool) {
	u, ok := ctx.Value(impersonatorKey{}).(*User)
	return u, ok
}

type accessRecordKey struct{}

// AccessRecord is filled in by the filters inside the access log's, which cannot see their contexts:
// who the request ran as, and who impersonated them.
type AccessRecord struct {
	User         *User
	Impersonator *User
}

// WithAccessRecord returns ctx carrying rec for the inner filters to fill.
func WithAccessRecord(ctx context.Context, rec *AccessRecord) context.Context {
	return context.WithValue(ctx, accessRecordKey{}, rec)
}

// AccessRecordFrom returns the request's access record, when the access log asked for one.
func AccessRecordFrom(ctx context.Context) (*AccessRecord, bool) {
	rec, ok := ctx.Value(accessRecordKey{}).(*AccessRecord)
	return rec, ok
}
