package serviceaccount

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// SupportedAlgorithms are the JWS algorithms kube signs service-account tokens with; a token
// with another "alg" is not parsed at all.
var supportedAlgorithms = []jose.SignatureAlgorithm{jose.RS256, jose.ES256, jose.ES384, jose.ES512}

// DefaultCacheTTL is how long a verified token is remembered: kube-apiserver's token
// authentication cache keeps successes 10 s (and failures not at all), so a token of a deleted
// ServiceAccount works up to 10 s longer there too.
const DefaultCacheTTL = 10 * time.Second

// maxCachedTokens bounds the cache's memory: past it, the cache starts over.
const maxCachedTokens = 4096

// AuthenticatorConfig says which tokens an Authenticator accepts.
type AuthenticatorConfig struct {
	// Issuers are the accepted "iss" values (every --service-account-issuer).
	Issuers []string
	// Keys verify signatures (--service-account-key-file).
	Keys []PublicKey
	// Audiences are the API's (--api-audiences): a token must name one unless the caller asks for
	// others (a TokenReview's spec.audiences).
	Audiences []string
	// Getter looks up the service account (and bound objects) a token names.
	Getter Getter
	// CacheTTL is how long a success is remembered; 0 means DefaultCacheTTL, negative no cache.
	CacheTTL time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Info is who a token identifies.
type Info struct {
	Name   string
	UID    string
	Groups []string
	Extra  map[string][]string
}

// Response is a successful authentication: the user and the audiences the token was valid for.
type Response struct {
	User      Info
	Audiences []string
}

// Authenticator verifies bound service-account tokens as kube's JWT token authenticator does.
type Authenticator struct {
	cfg    AuthenticatorConfig
	keys   map[string][]PublicKey
	issuer map[string]bool

	mu    sync.Mutex
	cache map[cacheKey]cachedResponse
}

type cacheKey struct {
	token     [sha256.Size]byte
	audiences string
}

type cachedResponse struct {
	resp   *Response
	expiry time.Time
}

// NewAuthenticator checks cfg and returns its authenticator.
func NewAuthenticator(cfg AuthenticatorConfig) (*Authenticator, error) {
	if len(cfg.Issuers) == 0 {
		return nil, errors.New("service-account-issuer is a required flag")
	}
	if len(cfg.Keys) == 0 {
		return nil, errors.New("no service-account public keys to verify tokens with")
	}
	if cfg.Getter == nil {
		return nil, errors.New("no service-account getter")
	}
	if cfg.CacheTTL == 0 {
		cfg.CacheTTL = DefaultCacheTTL
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	a := &Authenticator{cfg: cfg, keys: map[string][]PublicKey{}, issuer: map[string]bool{}}
	for _, k := range cfg.Keys {
		a.keys[k.KeyID] = append(a.keys[k.KeyID], k)
	}
	for _, iss := range cfg.Issuers {
		a.issuer[iss] = true
	}
	return a, nil
}

// APIAudiences are the audiences tokens are checked against when the caller names none.
func (a *Authenticator) APIAudiences() []string { return slices.Clone(a.cfg.Audiences) }

// AuthenticateToken verifies token for audiences (nil: the API's). ok is false with a nil error
// when the token is not a JWT of a configured issuer, so that other authenticators may try it; a
// token of ours that fails any check is an error.
func (a *Authenticator) AuthenticateToken(ctx context.Context, token string, audiences []string) (*Response, bool, error) {
	if audiences == nil {
		audiences = a.cfg.Audiences
	}
	now := a.cfg.Now()
	key := cacheKey{token: sha256.Sum256([]byte(token)), audiences: strings.Join(audiences, "\x00")}
	if a.cfg.CacheTTL > 0 {
		a.mu.Lock()
		c, hit := a.cache[key]
		a.mu.Unlock()
		if hit && now.Before(c.expiry) {
			return c.resp, true, nil
		}
	}
	resp, expiry, ok, err := a.verify(ctx, token, audiences, now)
	if !ok || err != nil || a.cfg.CacheTTL < 0 {
		return resp, ok, err
	}
	if until := now.Add(a.cfg.CacheTTL); until.Before(expiry) {
		expiry = until
	}
	a.mu.Lock()
	if a.cache == nil || len(a.cache) >= maxCachedTokens {
		a.cache = make(map[cacheKey]cachedResponse)
	}
	a.cache[key] = cachedResponse{resp: resp, expiry: expiry}
	a.mu.Unlock()
	return resp, true, nil
}

// verify does the work of AuthenticateToken and says until when the answer holds.
func (a *Authenticator) verify(ctx context.Context, token string, audiences []string, now time.Time) (*Response, time.Time, bool, error) {
	if strings.HasPrefix(strings.TrimSpace(token), "{") || strings.Count(token, ".") != 2 {
		return nil, time.Time{}, false, nil
	}
	tok, err := jwt.ParseSigned(token, supportedAlgorithms)
	if err != nil {
		return nil, time.Time{}, false, nil
	}
	var unverified jwt.Claims
	if err := tok.UnsafeClaimsWithoutVerification(&unverified); err != nil || !a.issuer[unverified.Issuer] {
		return nil, time.Time{}, false, nil // not a token of ours: another authenticator may know it
	}
	var kid string
	for _, h := range tok.Headers {
		if h.KeyID != "" {
			kid = h.KeyID
			break
		}
	}
	candidates := a.cfg.Keys
	if kid != "" {
		candidates = a.keys[kid]
	}
	if len(candidates) == 0 {
		return nil, time.Time{}, false, errors.New("invalid signature, no keys found")
	}
	var (
		public  jwt.Claims
		private privateClaims
		errs    []error
		found   bool
	)
	for _, k := range candidates {
		if err := tok.Claims(k.Key, &public, &private); err != nil {
			errs = append(errs, err)
			continue
		}
		found = true
		break
	}
	if !found {
		return nil, time.Time{}, false, errors.Join(errs...)
	}
	if !a.issuer[public.Issuer] {
		return nil, time.Time{}, false, fmt.Errorf("token issuer %q is invalid", public.Issuer)
	}
	tokenAudiences := []string(public.Audience)
	if len(tokenAudiences) == 0 {
		tokenAudiences = a.cfg.Audiences // a legacy token: only the API's audiences
	}
	var matched []string
	for _, aud := range tokenAudiences {
		if slices.Contains(audiences, aud) && !slices.Contains(matched, aud) {
			matched = append(matched, aud)
		}
	}
	if len(matched) == 0 && len(a.cfg.Audiences) != 0 {
		return nil, time.Time{}, false, fmt.Errorf("token audiences %q is invalid for the target audiences %q", tokenAudiences, audiences)
	}
	info, err := a.validate(ctx, &public, &private, now)
	if err != nil {
		return nil, time.Time{}, false, err
	}
	expiry := now.Add(time.Hour)
	if public.Expiry != nil {
		expiry = public.Expiry.Time().Add(jwt.DefaultLeeway)
	}
	return &Response{User: *info, Audiences: matched}, expiry, true, nil
}

// validate checks the times and the objects the token names, as kube's validator does, and
// builds the user.
func (a *Authenticator) validate(ctx context.Context, public *jwt.Claims, private *privateClaims, now time.Time) (*Info, error) {
	switch err := public.Validate(jwt.Expected{Time: now}); {
	case err == nil:
	case errors.Is(err, jwt.ErrExpired):
		return nil, errors.New("service account token has expired")
	case errors.Is(err, jwt.ErrNotValidYet):
		return nil, errors.New("service account token is not valid yet")
	case errors.Is(err, jwt.ErrIssuedInTheFuture):
		return nil, errors.New("service account token is issued in the future")
	default:
		return nil, fmt.Errorf("service account token claims could not be validated: %w", err)
	}
	k := private.Kubernetes
	invalidIfDeletedBefore := now.Add(-jwt.DefaultLeeway)
	sa, err := a.cfg.Getter.Get(ctx, "serviceaccounts", k.Namespace, k.Svcacct.Name)
	if err != nil {
		return nil, err
	}
	if string(sa.UID) != k.Svcacct.UID {
		return nil, fmt.Errorf("service account UID (%s) does not match claim (%s)", sa.UID, k.Svcacct.UID)
	}
	if sa.DeletionTimestamp != nil && sa.DeletionTimestamp.Time.Before(invalidIfDeletedBefore) {
		return nil, fmt.Errorf("service account %s/%s has been deleted", k.Namespace, k.Svcacct.Name)
	}
	bound := func(resource, namespace string, ref *Ref, claim string) error {
		obj, err := a.cfg.Getter.Get(ctx, resource, namespace, ref.Name)
		switch {
		case apierrors.IsNotFound(err):
			return errors.New("service account token has been invalidated")
		case err != nil:
			return err
		case string(obj.UID) != ref.UID:
			return fmt.Errorf("%s UID (%s) does not match service account %s ref claim (%s)", claim, obj.UID, claim, ref.UID)
		case obj.DeletionTimestamp != nil && obj.DeletionTimestamp.Time.Before(invalidIfDeletedBefore):
			return errors.New("service account token has been invalidated")
		}
		return nil
	}
	info := &Info{
		Name:   Username(k.Namespace, k.Svcacct.Name),
		UID:    k.Svcacct.UID,
		Groups: []string{AllServiceAccounts, GroupPrefix + k.Namespace},
		Extra:  map[string][]string{},
	}
	if k.Secret != nil {
		if err := bound("secrets", k.Namespace, k.Secret, "secret"); err != nil {
			return nil, err
		}
	}
	if k.Pod != nil {
		if err := bound("pods", k.Namespace, k.Pod, "pod"); err != nil {
			return nil, err
		}
		info.Extra[ExtraPodName] = []string{k.Pod.Name}
		info.Extra[ExtraPodUID] = []string{k.Pod.UID}
		if k.Node != nil {
			info.Extra[ExtraNodeName] = []string{k.Node.Name}
			if k.Node.UID != "" {
				info.Extra[ExtraNodeUID] = []string{k.Node.UID}
			}
		}
	} else if k.Node != nil {
		if err := bound("nodes", "", k.Node, "node"); err != nil {
			return nil, err
		}
		info.Extra[ExtraNodeName] = []string{k.Node.Name}
		info.Extra[ExtraNodeUID] = []string{k.Node.UID}
	}
	if public.ID != "" {
		info.Extra[ExtraCredentialID] = []string{credentialIDJTIPrefix + public.ID}
	}
	if len(info.Extra) == 0 {
		info.Extra = nil
	}
	return info, nil
}
