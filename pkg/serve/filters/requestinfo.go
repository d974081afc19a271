package filters

import (
	"net/http"

	"github.com/apictl/apictl/pkg/serve/request"
)

// WithRequestInfo resolves the request's verb, group, version, resource, namespace and name once, for
// every filter and handler after it.
func WithRequestInfo(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info := request.NewRequestInfo(r)
		next.ServeHTTP(w, r.WithContext(request.WithRequestInfo(r.Context(), info)))
	})
}

// IsLongRunning reports whether a request may outlive --request-timeout: watches do.
func IsLongRunning(info *request.RequestInfo) bool {
	return info != nil && info.IsResourceRequest && info.Verb == "watch"
}

// isMutating reports whether a request changes state, for the separate mutating in-flight limit.
func isMutating(r *http.Request) bool {
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}
