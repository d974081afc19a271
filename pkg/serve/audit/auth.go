package audit

import (
	"context"
	"encoding/json"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	auditinternal "k8s.io/apiserver/pkg/apis/audit"

	"github.com/apictl/apictl/pkg/serve/auth"
	"github.com/apictl/apictl/pkg/serve/request"
	"github.com/apictl/apictl/pkg/serve/status"
)

// The annotations kube's authorization filter adds to the event.
const (
	decisionAnnotationKey = "authorization.k8s.io/decision"
	reasonAnnotationKey   = "authorization.k8s.io/reason"
	decisionAllow         = "allow"
	decisionForbid        = "forbid"
	reasonError           = "internal error"
)

// Authorizer returns authz annotating the request's event with the decision and the reason, as
// kube's authorization filter does. Give it to the authorization filter only: the impersonation
// filter's checks do not annotate in kube either.
func (a *Auditor) Authorizer(authz auth.Authorizer) auth.Authorizer {
	if a == nil {
		return authz
	}
	return auth.AuthorizerFunc(func(ctx context.Context, u *request.User, info *request.RequestInfo) (auth.Decision, string, error) {
		d, reason, err := authz.Authorize(ctx, u, info)
		st := stateFrom(ctx)
		if st == nil || st.ev == nil {
			return d, reason, err
		}
		switch {
		case d == auth.Allow:
			st.ev.annotate(decisionAnnotationKey, decisionAllow, reasonAnnotationKey, reason)
		case err != nil:
			st.ev.annotate(reasonAnnotationKey, reasonError)
		default:
			st.ev.annotate(decisionAnnotationKey, decisionForbid, reasonAnnotationKey, reason)
		}
		return d, reason, err
	})
}

// Authenticator returns authn logging each failed authentication, as kube's
// WithFailedAuthenticationAudit does: one ResponseStarted event with no user and the 401 Status the
// authentication filter answers with (kube's own "Authentication failed, attempted: ..." message is
// replaced by that Status before the event is written, so it never shows).
func (a *Auditor) Authenticator(authn auth.Authenticator) auth.Authenticator {
	if a == nil {
		return authn
	}
	return auth.AuthenticatorFunc(func(r *http.Request) (*request.User, bool, error) {
		u, ok, err := authn.AuthenticateRequest(r)
		if err != nil || !ok {
			a.failedAuthentication(r)
		}
		return u, ok, err
	})
}

func (a *Auditor) failedAuthentication(r *http.Request) {
	ctx := r.Context()
	st := stateFrom(ctx)
	if st == nil {
		st = &state{id: a.newID(), received: a.now()}
	}
	info, _ := request.RequestInfoFrom(ctx)
	cfg := a.policy.evaluate(nil, info, r.URL.Path)
	if cfg.level == auditinternal.LevelNone {
		return
	}
	e := newEvent(a.sink, a.now, r, st, nil, info, cfg)
	s := status.Unauthorized()
	e.setStatus(&metav1.Status{Status: s.Status, Message: s.Message, Reason: s.Reason, Code: s.Code})
	s.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	if body, err := json.Marshal(s); err == nil {
		e.setObjects(nil, body, nil)
	}
	e.process(auditinternal.StageResponseStarted)
}
