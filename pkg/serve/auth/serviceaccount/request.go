package serviceaccount

import (
	"net/http"
	"strings"

	"github.com/apictl/apictl/pkg/serve/request"
)

// AuthenticateRequest authenticates the request's bearer token for the audiences its context asks
// for (request.WithAudiences), else the API's: the secure port's authenticator union calls it, and
// so does TokenReview through that union.
func (a *Authenticator) AuthenticateRequest(r *http.Request) (*request.User, bool, error) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return nil, false, nil
	}
	token = strings.TrimSpace(token)
	if token == "" {
		return nil, false, nil
	}
	// A TokenReview asks for its spec.audiences; everything else for the API's.
	audiences, _ := request.AudiencesFrom(r.Context())
	resp, ok, err := a.AuthenticateToken(r.Context(), token, audiences)
	if !ok || err != nil {
		return nil, ok, err
	}
	request.ReportMatchedAudiences(r.Context(), resp.Audiences)
	return resp.User.RequestUser(), true, nil
}

// RequestUser is the user as the server's filters see it: a copy, since later filters add groups.
func (i Info) RequestUser() *request.User {
	u := &request.User{Name: i.Name, UID: i.UID, Groups: append([]string(nil), i.Groups...)}
	if len(i.Extra) > 0 {
		u.Extra = make(map[string][]string, len(i.Extra))
		for k, v := range i.Extra {
			u.Extra[k] = append([]string(nil), v...)
		}
	}
	return u
}
