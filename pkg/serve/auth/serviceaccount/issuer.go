package serviceaccount

import (
	"crypto"
	"errors"
	"fmt"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/google/uuid"
)

// Issuer signs bound service-account tokens as kube-apiserver does: with the key of
// --service-account-signing-key-file, "kid" its key ID, "iss" the first --service-account-issuer.
type Issuer struct {
	issuer string
	signer jose.Signer
	// now and newID are the clock and the "jti" source; tests replace them.
	now   func() time.Time
	newID func() string
}

// NewIssuer returns an issuer for iss signing with key (RSA or ECDSA).
func NewIssuer(iss string, key crypto.Signer) (*Issuer, error) {
	if iss == "" {
		return nil, errors.New("the service-account issuer is empty")
	}
	alg, err := Algorithm(key.Public())
	if err != nil {
		return nil, err
	}
	kid, err := KeyID(key.Public())
	if err != nil {
		return nil, err
	}
	signer, err := jose.NewSigner(jose.SigningKey{
		Algorithm: alg,
		Key:       &jose.JSONWebKey{Algorithm: string(alg), Key: key, KeyID: kid, Use: "sig"},
	}, nil)
	if err != nil {
		return nil, fmt.Errorf("creating the service-account token signer: %w", err)
	}
	return &Issuer{issuer: iss, signer: signer, now: time.Now, newID: uuid.NewString}, nil
}

// Name is the issuer's "iss".
func (i *Issuer) Name() string { return i.issuer }

// TokenSpec is what one token asserts.
type TokenSpec struct {
	// Namespace, Name and UID are the service account's.
	Namespace, Name, UID string
	Audiences            []string
	// Expiration is the token's lifetime from now.
	Expiration time.Duration
	// WarnAfter, when set, is when a token whose lifetime kube extended should have expired
	// (the "warnafter" claim).
	WarnAfter time.Duration
	// Pod, Secret and Node are the objects the token is bound to, if any: Pod (with or without
	// its Node), Secret, or Node alone.
	Pod, Secret, Node *Ref
}

// Token is an issued token.
type Token struct {
	Token     string
	IssuedAt  time.Time
	ExpiresAt time.Time
	// ID is the "jti" claim.
	ID string
}

// Issue signs a token for spec.
func (i *Issuer) Issue(spec TokenSpec) (*Token, error) {
	if spec.Secret != nil && (spec.Pod != nil || spec.Node != nil) {
		return nil, errors.New("internal error, token can only be bound to one object type")
	}
	now := i.now()
	id := i.newID()
	expires := now.Add(spec.Expiration)
	public := publicClaims{
		Issuer:    i.issuer,
		Subject:   Username(spec.Namespace, spec.Name),
		Audience:  spec.Audiences,
		IssuedAt:  jwt.NewNumericDate(now),
		NotBefore: jwt.NewNumericDate(now),
		Expiry:    jwt.NewNumericDate(expires),
		ID:        id,
	}
	private := privateClaims{Kubernetes: kubernetesClaim{
		Namespace: spec.Namespace,
		Svcacct:   Ref{Name: spec.Name, UID: spec.UID},
		Pod:       spec.Pod,
		Secret:    spec.Secret,
		Node:      spec.Node,
	}}
	if spec.WarnAfter != 0 {
		private.Kubernetes.WarnAfter = jwt.NewNumericDate(now.Add(spec.WarnAfter))
	}
	raw, err := jwt.Signed(i.signer).Claims(private).Claims(public).Serialize()
	if err != nil {
		return nil, fmt.Errorf("signing the service-account token: %w", err)
	}
	return &Token{Token: raw, IssuedAt: now, ExpiresAt: expires, ID: id}, nil
}
