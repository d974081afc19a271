package filters

import (
	"log/slog"
	"net/http"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apictl/apictl/pkg/serve/auth"
	"github.com/apictl/apictl/pkg/serve/request"
	"github.com/apictl/apictl/pkg/serve/status"
)

// WithAuthentication identifies the caller or answers 401 with kube's Unauthorized Status. The
// Authorization header is removed once used, so no handler can leak the credential.
func WithAuthentication(a auth.Authenticator, log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			u, ok, err := a.AuthenticateRequest(r)
			if err != nil || !ok {
				if err != nil {
					log.Debug("unable to authenticate the request", "path", r.URL.Path, "err", err)
				}
				status.Write(w, r, status.Unauthorized())
				return
			}
			r.Header.Del("Authorization")
			if rec, ok := request.AccessRecordFrom(r.Context()); ok {
				rec.User = u
			}
			next.ServeHTTP(w, r.WithContext(request.WithUser(r.Context(), u)))
		})
	}
}

// WithAuthorization asks the authorizer and answers 403 with kube's Forbidden Status on denial.
func WithAuthorization(a auth.Authorizer, log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx := r.Context()
			info, ok := request.RequestInfoFrom(ctx)
			if !ok {
				info = request.NewRequestInfo(r)
			}
			u, _ := request.UserFrom(ctx)
			d, reason, err := a.Authorize(ctx, u, info)
			if d == auth.Allow {
				next.ServeHTTP(w, r)
				return
			}
			if err != nil {
				log.Error("authorization failed", "path", r.URL.Path, "err", err)
				status.WriteError(w, r, apierrors.NewInternalError(err))
				return
			}
			msg := auth.ForbiddenMessage(u, info)
			if reason != "" {
				msg += ": " + reason
			}
			gr := schema.GroupResource{Group: info.APIGroup, Resource: info.Resource}
			status.WriteError(w, r, apierrors.NewForbidden(gr, info.Name, forbiddenError(msg)))
		})
	}
}

// forbiddenError carries a message verbatim into apierrors.NewForbidden.
type forbiddenError string

func (e forbiddenError) Error() string { return string(e) }

// WithMaxRequestBody answers 413 before reading a body whose declared length is over limit, and caps
// the reading of every other body at limit so a handler's read fails with *http.MaxBytesError
// (which handlers turn into 413) instead of filling memory. limit 0 means no limit.
func WithMaxRequestBody(limit int64) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		if limit <= 0 {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.ContentLength > limit {
				status.WriteError(w, r, RequestEntityTooLarge(limit))
				return
			}
			if r.Body != nil && r.Body != http.NoBody {
				r.Body = http.MaxBytesReader(w, r.Body, limit)
			}
			next.ServeHTTP(w, r)
		})
	}
}

// RequestEntityTooLarge is kube's 413 for a body over the limit.
func RequestEntityTooLarge(limit int64) error {
	return apierrors.NewRequestEntityTooLargeError(limitMessage(limit))
}

func limitMessage(limit int64) string {
	return "limit is " + strconv.FormatInt(limit, 10)
}
