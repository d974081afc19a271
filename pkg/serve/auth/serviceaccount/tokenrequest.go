package serviceaccount

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Token lifetimes kube enforces and grants (pkg/apis/authentication/validation and
// pkg/serviceaccount/claims.go).
const (
	// DefaultExpirationSeconds is a TokenRequest's lifetime when it asks for none.
	DefaultExpirationSeconds = 3600
	// MinExpirationSeconds is the shortest lifetime a TokenRequest may ask for: 10 minutes.
	MinExpirationSeconds = 10 * 60
	// maxExpirationSeconds is the longest: 2^32 seconds.
	maxExpirationSeconds = 1 << 32
	// WarnOnlyExpirationSeconds is the lifetime kubelet asks for projected tokens; with
	// --service-account-extend-token-expiration kube extends such pod-bound tokens to
	// ExtendedExpiration and records when they should have expired in "warnafter".
	WarnOnlyExpirationSeconds = 60*60 + 7
	// ExtendedExpiration is the extended lifetime: one year.
	ExtendedExpiration = 24 * 365 * time.Hour
)

var tokenRequestKind = schema.GroupKind{Group: authenticationv1.GroupName, Kind: "TokenRequest"}

// TokenRequestConfig says how TokenRequests are answered.
type TokenRequestConfig struct {
	Issuer *Issuer
	// Audiences are the API's: the default audiences of a token.
	Audiences []string
	// MaxExpiration caps requested lifetimes (--service-account-max-token-expiration); 0 means no cap.
	MaxExpiration time.Duration
	// ExtendExpiration is --service-account-extend-token-expiration.
	ExtendExpiration bool
	// Getter reads the service account and bound objects; it should read the latest state (a quorum
	// read), so that a ServiceAccount created a moment ago can be asked for a token.
	Getter Getter
}

// TokenRequester answers the serviceaccounts/token subresource as kube's TokenREST does.
type TokenRequester struct {
	cfg TokenRequestConfig
	now func() time.Time
}

// NewTokenRequester returns a requester for cfg.
func NewTokenRequester(cfg TokenRequestConfig) (*TokenRequester, error) {
	if cfg.Issuer == nil || cfg.Getter == nil {
		return nil, errors.New("a token requester needs an issuer and a getter")
	}
	return &TokenRequester{cfg: cfg, now: time.Now}, nil
}

// Create issues a token for the ServiceAccount namespace/name as req asks, returning req answered
// (status.token, status.expirationTimestamp) and kube's warnings. Errors are API status errors with
// kube's messages.
func (t *TokenRequester) Create(ctx context.Context, namespace, name string, req *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, []string, error) {
	if namespace == "" {
		return nil, nil, apierrors.NewBadRequest("namespace is required")
	}
	out := req.DeepCopy()
	if out.Name != "" && out.Name != name {
		return nil, nil, apierrors.NewInvalid(tokenRequestKind, name, field.ErrorList{
			field.Invalid(field.NewPath("metadata").Child("name"), out.Name, "must match the service account name if specified")})
	}
	if out.Namespace != "" && out.Namespace != namespace {
		return nil, nil, apierrors.NewInvalid(tokenRequestKind, name, field.ErrorList{
			field.Invalid(field.NewPath("metadata").Child("namespace"), out.Namespace, "must match the service account namespace if specified")})
	}
	sa, err := t.cfg.Getter.Get(ctx, "serviceaccounts", namespace, name)
	if err != nil {
		return nil, nil, err
	}
	if out.UID != "" && out.UID != sa.UID {
		return nil, nil, apierrors.NewConflict(schema.GroupResource{Group: tokenRequestKind.Group, Resource: tokenRequestKind.Kind}, name,
			fmt.Errorf("the UID in the token request (%s) does not match the UID of the service account (%s)", out.UID, sa.UID))
	}
	if len(out.Spec.Audiences) == 0 {
		out.Spec.Audiences = slices.Clone(t.cfg.Audiences)
	}
	if out.Spec.ExpirationSeconds == nil {
		out.Spec.ExpirationSeconds = ptr(int64(DefaultExpirationSeconds))
	}
	out.Name, out.Namespace, out.UID = sa.Name, sa.Namespace, sa.UID
	now := t.now()
	out.CreationTimestamp = metav1.NewTime(now)
	out.Status = authenticationv1.TokenRequestStatus{}
	if errs := validateTokenRequest(out); len(errs) > 0 {
		return nil, nil, apierrors.NewInvalid(tokenRequestKind, "", errs)
	}
	spec := TokenSpec{Namespace: sa.Namespace, Name: sa.Name, UID: string(sa.UID), Audiences: out.Spec.Audiences}
	var pod bool
	if ref := out.Spec.BoundObjectRef; ref != nil {
		var uid string
		gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
		switch {
		case gvk.Group == "" && gvk.Kind == "Pod":
			// apictl serves no pods, so none can be found: kube's answer for a missing pod.
			obj, err := t.cfg.Getter.Get(ctx, "pods", namespace, ref.Name)
			if err != nil {
				return nil, nil, err
			}
			uid, pod = string(obj.UID), true
			spec.Pod = &Ref{Name: obj.Name, UID: uid}
		case gvk.Group == "" && gvk.Kind == "Node":
			obj, err := t.cfg.Getter.Get(ctx, "nodes", "", ref.Name)
			if err != nil {
				return nil, nil, err
			}
			uid = string(obj.UID)
			spec.Node = &Ref{Name: obj.Name, UID: uid}
		case gvk.Group == "" && gvk.Kind == "Secret":
			obj, err := t.cfg.Getter.Get(ctx, "secrets", namespace, ref.Name)
			if err != nil {
				return nil, nil, err
			}
			uid = string(obj.UID)
			spec.Secret = &Ref{Name: obj.Name, UID: uid}
		default:
			return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("cannot bind token to object of type %s", gvk.String()))
		}
		if ref.UID != "" && string(ref.UID) != uid {
			return nil, nil, apierrors.NewConflict(schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}, ref.Name,
				fmt.Errorf("the UID in the bound object reference (%s) does not match the UID in record. The object might have been deleted and then recreated", ref.UID))
		}
	}
	var warnings []string
	if maxSec := int64(t.cfg.MaxExpiration / time.Second); maxSec > 0 && *out.Spec.ExpirationSeconds > maxSec {
		warnings = append(warnings, fmt.Sprintf("requested expiration of %d seconds shortened to %d seconds", *out.Spec.ExpirationSeconds, maxSec))
		out.Spec.ExpirationSeconds = ptr(maxSec)
	}
	exp := time.Duration(*out.Spec.ExpirationSeconds) * time.Second
	spec.Expiration = exp
	if t.cfg.ExtendExpiration && pod && *out.Spec.ExpirationSeconds == WarnOnlyExpirationSeconds && t.isAPIAudiences(out.Spec.Audiences) {
		spec.WarnAfter, spec.Expiration = exp, ExtendedExpiration
	}
	tok, err := t.cfg.Issuer.Issue(spec)
	if err != nil {
		return nil, nil, apierrors.NewInternalError(fmt.Errorf("failed to generate token: %w", err))
	}
	out.Status = authenticationv1.TokenRequestStatus{
		Token:               tok.Token,
		ExpirationTimestamp: metav1.NewTime(now.Add(exp)),
	}
	return out, warnings, nil
}

// isAPIAudiences says whether every audience is one of the API's, as kube's isKubeAudiences does.
func (t *TokenRequester) isAPIAudiences(auds []string) bool {
	for _, a := range auds {
		if !slices.Contains(t.cfg.Audiences, a) {
			return false
		}
	}
	return len(auds) > 0
}

// validateTokenRequest is kube's ValidateTokenRequest for requests without attestations.
func validateTokenRequest(tr *authenticationv1.TokenRequest) field.ErrorList {
	var errs field.ErrorList
	specPath := field.NewPath("spec")
	exp := *tr.Spec.ExpirationSeconds
	if exp < MinExpirationSeconds {
		errs = append(errs, field.Invalid(specPath.Child("expirationSeconds"), exp, "may not specify a duration less than 10 minutes"))
	}
	if exp > maxExpirationSeconds {
		errs = append(errs, field.Invalid(specPath.Child("expirationSeconds"), exp, "may not specify a duration larger than 2^32 seconds"))
	}
	return errs
}

func ptr[T any](v T) *T { return &v }
