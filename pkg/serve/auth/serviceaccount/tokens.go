package serviceaccount

import (
	"crypto"
	"errors"
	"slices"
	"time"

	"github.com/apictl/apictl/pkg/storage"
)

// Config is the server's service-account token configuration, as the flags give it.
type Config struct {
	// Issuers are the accepted issuers; the first signs (--service-account-issuer).
	Issuers []string
	// SigningKey signs tokens (--service-account-signing-key-file).
	SigningKey crypto.Signer
	// Keys verify tokens (--service-account-key-file).
	Keys []PublicKey
	// Audiences are the API's (--api-audiences; default: the issuers).
	Audiences []string
	// JWKSURI overrides the jwks_uri of the discovery document (--service-account-jwks-uri).
	JWKSURI string
	// MaxExpiration and ExtendExpiration shape TokenRequest lifetimes.
	MaxExpiration    time.Duration
	ExtendExpiration bool
}

// Tokens is everything the server does with service-account tokens: it issues them (TokenRequest),
// authenticates them (the secure port and TokenReview) and publishes their keys (OIDC discovery).
// It is built with the server's configuration, before storage exists; SetStores connects it.
type Tokens struct {
	cfg           Config
	Issuer        *Issuer
	Authenticator *Authenticator
	Requester     *TokenRequester
	cached        LateGetter
	latest        LateGetter
}

// NewTokens checks cfg and builds the issuer, authenticator and TokenRequest handler.
func NewTokens(cfg Config) (*Tokens, error) {
	if len(cfg.Issuers) == 0 || cfg.SigningKey == nil {
		return nil, errors.New("--service-account-signing-key-file and --service-account-issuer are required flags")
	}
	if len(cfg.Audiences) == 0 {
		cfg.Audiences = slices.Clone(cfg.Issuers)
	}
	t := &Tokens{cfg: cfg}
	var err error
	if t.Issuer, err = NewIssuer(cfg.Issuers[0], cfg.SigningKey); err != nil {
		return nil, err
	}
	if t.Authenticator, err = NewAuthenticator(AuthenticatorConfig{
		Issuers: cfg.Issuers, Keys: cfg.Keys, Audiences: cfg.Audiences, Getter: &t.cached,
	}); err != nil {
		return nil, err
	}
	if t.Requester, err = NewTokenRequester(TokenRequestConfig{
		Issuer: t.Issuer, Audiences: cfg.Audiences, MaxExpiration: cfg.MaxExpiration,
		ExtendExpiration: cfg.ExtendExpiration, Getter: &t.latest,
	}); err != nil {
		return nil, err
	}
	return t, nil
}

// SetStores connects lookups to the server's stores by core resource (serviceaccounts, secrets):
// the authenticator reads the watch caches, TokenRequest the latest state. Call it once, before
// the server serves.
func (t *Tokens) SetStores(stores map[string]storage.Store) {
	t.cached.Set(StoreGetter{Stores: stores})
	t.latest.Set(StoreGetter{Stores: stores, Latest: true})
}

// Audiences are the API's audiences.
func (t *Tokens) Audiences() []string { return slices.Clone(t.cfg.Audiences) }

// Discovery builds the OIDC documents for a server reached at externalAddress (host:port). It
// fails, and the server then serves no discovery as kube does, when the issuer is not an https URL.
func (t *Tokens) Discovery(externalAddress string) (*Discovery, error) {
	return NewDiscovery(t.Issuer.Name(), t.cfg.JWKSURI, externalAddress, t.cfg.Keys)
}
