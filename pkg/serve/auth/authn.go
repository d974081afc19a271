// Package auth decides who is calling (authenticators) and what they may do (authorizers), with the
// semantics and messages of kube-apiserver's x509, token-file, anonymous, AlwaysAllow, AlwaysDeny and
// ABAC modes.
package auth

import (
	"crypto/sha256"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

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
// A verified chain is remembered until its first certificate expires or the bundle changes: verifying
// an ECDSA chain costs more than the rest of a cached GET, and every request of an HTTP/2 connection
// (every request of a client, with keep-alive) presents the same chain. Use a pointer; the zero value
// with Roots set is ready.
type ClientCert struct {
	Roots func() *x509.CertPool

	mu       sync.Mutex
	verified map[[sha256.Size]byte]verifiedChain
}

// verifiedChain is what verifying a chain established, and for how long.
type verifiedChain struct {
	roots  *x509.CertPool // the bundle it was verified against
	expiry time.Time      // the earliest NotAfter in the chain
	name   string
	groups []string
}

// maxVerifiedChains bounds the memory of verified chains: past it the cache starts over, which costs
// one verification per client.
const maxVerifiedChains = 4096

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
	key := chainKey(r.TLS.PeerCertificates)
	now := time.Now()
	a.mu.Lock()
	v, ok := a.verified[key]
	a.mu.Unlock()
	if !ok || v.roots != roots || !now.Before(v.expiry) {
		var err error
		if v, err = verifyChain(r.TLS.PeerCertificates, roots); err != nil {
			return nil, false, err
		}
		a.mu.Lock()
		if a.verified == nil || len(a.verified) >= maxVerifiedChains {
			a.verified = make(map[[sha256.Size]byte]verifiedChain)
		}
		a.verified[key] = v
		a.mu.Unlock()
	}
	// A copy: later filters add groups to the user they are given.
	return &request.User{Name: v.name, Groups: append([]string(nil), v.groups...)}, true, nil
}

// chainKey identifies a presented chain by its certificates' bytes.
func chainKey(certs []*x509.Certificate) [sha256.Size]byte {
	h := sha256.New()
	for _, c := range certs {
		h.Write(c.Raw)
	}
	var key [sha256.Size]byte
	h.Sum(key[:0])
	return key
}

// verifyChain verifies a presented chain against roots for client authentication.
func verifyChain(certs []*x509.Certificate, roots *x509.CertPool) (verifiedChain, error) {
	leaf := certs[0]
	intermediates := x509.NewCertPool()
	for _, c := range certs[1:] {
		intermediates.AddCert(c)
	}
	chains, err := leaf.Verify(x509.VerifyOptions{
		Roots:         roots,
		Intermediates: intermediates,
		KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		return verifiedChain{}, fmt.Errorf("verifying client certificate %q: %w", leaf.Subject.CommonName, err)
	}
	if leaf.Subject.CommonName == "" {
		return verifiedChain{}, errors.New("client certificate has no CommonName to use as the user name")
	}
	v := verifiedChain{roots: roots, expiry: leaf.NotAfter, name: leaf.Subject.CommonName, groups: leaf.Subject.Organization}
	for _, chain := range chains {
		for _, c := range chain {
			if c.NotAfter.Before(v.expiry) {
				v.expiry = c.NotAfter
			}
		}
	}
	return v, nil
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
