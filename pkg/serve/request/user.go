package request

import "context"

// Well-known users and groups, as kube names them.
const (
	// GroupMasters is the superuser group: it passes every authorizer and in-flight limit.
	GroupMasters = "system:masters"
	// GroupAuthenticated is added to every user that proved an identity.
	GroupAuthenticated = "system:authenticated"
	// GroupUnauthenticated and UserAnonymous describe a request without credentials.
	GroupUnauthenticated = "system:unauthenticated"
	UserAnonymous        = "system:anonymous"
	// UserUnsecured is every request on the insecure port.
	UserUnsecured = "system:unsecured"
)

// User is an authenticated identity.
type User struct {
	Name   string
	UID    string
	Groups []string
	// Extra holds further facts about the user that authorizers and auditors may use, as kube's
	// user.Info.GetExtra: keys such as "scopes" or "authentication.kubernetes.io/credential-id".
	Extra map[string][]string
}

// InGroup reports whether the user belongs to group.
func (u *User) InGroup(group string) bool {
	for _, g := range u.Groups {
		if g == group {
			return true
		}
	}
	return false
}

// WithUser returns ctx carrying u.
func WithUser(ctx context.Context, u *User) context.Context {
	return context.WithValue(ctx, userKey, u)
}

// UserFrom returns the authenticated user, if authentication ran.
func UserFrom(ctx context.Context) (*User, bool) {
	u, ok := ctx.Value(userKey).(*User)
	return u, ok
}
