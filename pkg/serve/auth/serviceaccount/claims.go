package serviceaccount

import (
	"github.com/go-jose/go-jose/v4/jwt"
)

// Names kube gives service accounts as users (k8s.io/apiserver/pkg/authentication/serviceaccount).
const (
	UsernamePrefix        = "system:serviceaccount:"
	GroupPrefix           = "system:serviceaccounts:"
	AllServiceAccounts    = "system:serviceaccounts"
	ExtraCredentialID     = "authentication.kubernetes.io/credential-id"
	ExtraPodName          = "authentication.kubernetes.io/pod-name"
	ExtraPodUID           = "authentication.kubernetes.io/pod-uid"
	ExtraNodeName         = "authentication.kubernetes.io/node-name"
	ExtraNodeUID          = "authentication.kubernetes.io/node-uid"
	credentialIDJTIPrefix = "JTI="
)

// Username is the user name of a service account: system:serviceaccount:<namespace>:<name>.
func Username(namespace, name string) string { return UsernamePrefix + namespace + ":" + name }

// publicClaims are the registered claims as kube writes them. jwt.Claims would serialize a single
// audience as a string; kube's tokens always carry an array ("aud":["..."]).
type publicClaims struct {
	Issuer    string           `json:"iss,omitempty"`
	Subject   string           `json:"sub,omitempty"`
	Audience  []string         `json:"aud,omitempty"`
	Expiry    *jwt.NumericDate `json:"exp,omitempty"`
	NotBefore *jwt.NumericDate `json:"nbf,omitempty"`
	IssuedAt  *jwt.NumericDate `json:"iat,omitempty"`
	ID        string           `json:"jti,omitempty"`
}

// privateClaims is kube's "kubernetes.io" claim, field for field (pkg/serviceaccount/claims.go), so
// that tokens decode the same on both sides.
type privateClaims struct {
	Kubernetes kubernetesClaim `json:"kubernetes.io,omitempty"`
}

type kubernetesClaim struct {
	Namespace string           `json:"namespace,omitempty"`
	Svcacct   Ref              `json:"serviceaccount,omitempty"`
	Pod       *Ref             `json:"pod,omitempty"`
	Secret    *Ref             `json:"secret,omitempty"`
	Node      *Ref             `json:"node,omitempty"`
	WarnAfter *jwt.NumericDate `json:"warnafter,omitempty"`
}

// Ref names an object a token is bound to (or its service account) by name and UID.
type Ref struct {
	Name string `json:"name,omitempty"`
	UID  string `json:"uid,omitempty"`
}
