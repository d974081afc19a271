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

// IsLongRunning reports whether a request may outlive --request-timeout, as kube-apiserver's
// BasicLongRunningRequestCheck says: watches and proxies, and the streaming subresources (attach,
// exec, log, portforward, proxy), which an aggregated server may serve through the aggregator's proxy.
func IsLongRunning(info *request.RequestInfo) bool {
	if info == nil || !info.IsResourceRequest {
		return false
	}
	switch info.Verb {
	case "watch", "proxy":
		return true
	}
	switch info.Subresource {
	case "attach", "exec", "log", "portforward", "proxy":
		return true
	}
	return false
}

// isMutating reports whether a request changes state, for the separate mutating in-flight limit.
func isMutating(r *http.Request) bool {
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}
