package review

import (
	"context"
	"fmt"
	"net/http"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/apictl/apictl/pkg/serve/handlers"
	"github.com/apictl/apictl/pkg/serve/request"
)

// tokenReview runs the server's token authentication on spec.token alone, as kube's TokenReview
// storage does with a request that carries nothing but the bearer token: no client certificate, no
// front-proxy headers, and no anonymous fallback. The audiences asked for (spec.audiences, else the
// API's) travel in the context; an authenticator that checks audiences reports which of them the
// token was issued for (kube's status.audiences), one that does not leaves the answer repeating them.
func (r *reviews) tokenReview(ctx context.Context, req handlers.CreateRequest) (runtime.Object, error) {
	tr, ok := req.Object.(*authenticationv1.TokenReview)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a TokenReview: %#v", req.Object))
	}
	if req.Namespace != "" {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("namespace is not allowed on this type: %v", req.Namespace))
	}
	if tr.Spec.Token == "" {
		return nil, apierrors.NewBadRequest("token is required for TokenReview in authentication")
	}
	if r.cfg.Authentication == nil {
		return tr, nil
	}
	audiences := tr.Spec.Audiences
	if len(audiences) == 0 {
		audiences = r.cfg.APIAudiences
	}
	var matched request.MatchedAudiences
	tokenCtx := request.WithMatchedAudiences(context.WithoutCancel(ctx), &matched)
	if len(audiences) > 0 {
		tokenCtx = request.WithAudiences(tokenCtx, audiences)
	}
	fake, err := http.NewRequestWithContext(tokenCtx, http.MethodPost, "/", http.NoBody)
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("building the token's request: %w", err))
	}
	fake.Header.Set("Authorization", "Bearer "+tr.Spec.Token)
	u, ok, err := r.cfg.Authentication.AuthenticateRequest(fake)
	if ok && isAnonymous(u) {
		// The chain fell back to anonymous: no token authenticator knew the token.
		u, ok = nil, false
	}
	tr.Status = authenticationv1.TokenReviewStatus{Authenticated: ok}
	switch {
	case err != nil:
		tr.Status.Error = err.Error()
	case !ok:
		tr.Status.Error = "invalid bearer token"
	}
	if ok && u != nil {
		tr.Status.User = userInfo(u)
		tr.Status.Audiences = audiences
		if matched.Reported {
			tr.Status.Audiences = matched.Audiences
		}
	}
	return tr, nil
}

// isAnonymous reports whether u is the anonymous user the authenticator gives requests without
// credentials.
func isAnonymous(u *request.User) bool {
	return u != nil && u.Name == request.UserAnonymous && u.InGroup(request.GroupUnauthenticated)
}

// selfSubjectReview answers with the caller's own user, as kube's SelfSubjectReview storage does: a new
// object whose creationTimestamp is now.
func (r *reviews) selfSubjectReview(ctx context.Context, req handlers.CreateRequest) (runtime.Object, error) {
	if _, ok := req.Object.(*authenticationv1.SelfSubjectReview); !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a SelfSubjectReview: %#v", req.Object))
	}
	u, ok := request.UserFrom(ctx)
	if !ok || u == nil {
		return nil, apierrors.NewBadRequest("no user present on request")
	}
	return &authenticationv1.SelfSubjectReview{
		TypeMeta:   metav1.TypeMeta{Kind: "SelfSubjectReview", APIVersion: authenticationv1.SchemeGroupVersion.String()},
		ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(r.cfg.Now())},
		Status:     authenticationv1.SelfSubjectReviewStatus{UserInfo: userInfo(u)},
	}, nil
}

// userInfo is u as reviews report users.
func userInfo(u *request.User) authenticationv1.UserInfo {
	info := authenticationv1.UserInfo{Username: u.Name, UID: u.UID, Groups: u.Groups}
	if len(u.Extra) > 0 {
		info.Extra = make(map[string]authenticationv1.ExtraValue, len(u.Extra))
		for k, v := range u.Extra {
			info.Extra[k] = authenticationv1.ExtraValue(v)
		}
	}
	return info
}
