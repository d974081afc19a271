// Package auth decides who is calling (authenticators) and what they may do (authorizers), with the
// semantics and messages of kube-apiserver's x509, token-file, anonymous, AlwaysAllow, AlwaysDeny and
// ABAC modes.
package auth

import (
	"crypto/x509"
	"errors"
	"net/http"
	"strings"

	"github.com/apictl/apictl/pkg/serve/request"
)

// Authenticator identifies the caller of a request. ok is false with a nil error when the request
// carries no credentials of this kind; an error means it carried bad ones.
type Authenticator interface {
	AuthenticateRequest(r *http.Request) (u *request.User, ok bool, err error)
}

// AuthenticatorFunc adapts a function to Authenticator.
type AuthenticatorFunc func(r *http.Request) (*request.User, bool, error)

// AuthenticateRequest calls f.
func (f AuthenticatorFunc) AuthenticateRequest(r *http.Request) (*request.User, bool, error) {
	return f(r)
}

// ClientCert authenticates TLS client certificates signed by the CA bundle that roots returns: the
// user is the certificate's CommonName and the groups its Organizations. Roots is a function because
// the bundle is reloaded from disk while the server runs.
//
// Verified chains are remembered (see chainCache): verifying an ECDSA chain costs more than the rest
// of a cached GET. Use a pointer; the zero value with Roots set is ready.
type ClientCert struct {
	Roots func() *x509.CertPool

	chains chainCache
}

var _ Authenticator = (*ClientCert)(nil)

// AuthenticateRequest verifies the peer's chain for client authentication.
func (a *ClientCert) AuthenticateRequest(r *http.Request) (*request.User, bool, error) {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return nil, false, nil
	}
	roots := a.Roots()
	if roots == nil {
		return nil, false, nil
	}
	v, err := a.chains.verify(r.TLS.PeerCertificates, roots)
	if err != nil {
		return nil, false, err
	}
	if v.name == "" {
		return nil, false, errors.New("client certificate has no CommonName to use as the user name")
	}
	// A copy: later filters add groups to the user they are given.
	return &request.User{Name: v.name, Groups: append([]string(nil), v.groups...)}, true, nil
}

// Anonymous admits every request as system:anonymous in system:unauthenticated.
var Anonymous Authenticator = AuthenticatorFunc(func(*http.Request) (*request.User, bool, error) {
	return &request.User{Name: request.UserAnonymous, Groups: []string{request.GroupUnauthenticated}}, true, nil
})

// Insecure is the insecure port's authenticator: everyone is system:unsecured in system:masters.
var Insecure Authenticator = AuthenticatorFunc(func(*http.Request) (*request.User, bool, error) {
	return &request.User{Name: request.UserUnsecured, Groups: []string{request.GroupMasters, request.GroupAuthenticated}}, true, nil
})

// Union tries authenticators in order; the first that identifies the caller wins and every
// authenticated user joins system:authenticated. If any saw bad credentials and none succeeded, the
// result is an error, so a wrong token is a 401 and not an anonymous request. Anonymous, when set,
// identifies requests that carried no credentials at all.
func Union(anonymous Authenticator, authenticators ...Authenticator) Authenticator {
	return AuthenticatorFunc(func(r *http.Request) (*request.User, bool, error) {
		var errs []error
		for _, a := range authenticators {
			u, ok, err := a.AuthenticateRequest(r)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if ok {
				if !u.InGroup(request.GroupAuthenticated) {
					u.Groups = append(u.Groups, request.GroupAuthenticated)
				}
				return u, true, nil
			}
		}
		if len(errs) > 0 {
			return nil, false, errors.Join(errs...)
		}
		if anonymous != nil {
			return anonymous.AuthenticateRequest(r)
		}
		return nil, false, nil
	})
}

// bearerToken returns the token of an "Authorization: Bearer <token>" header.
func bearerToken(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}
