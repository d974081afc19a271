package filters

import "net/http"

// noCache is kube's Cache-Control for every response whose handler sets none: responses carry
// credentials' answers, which no proxy or browser cache may keep or share. One slice serves every
// response: a handler replaces it (Header.Set) or appends to it (a new array, as its capacity is
// its length), and nothing writes into it.
var noCache = []string{"no-cache, private"}

// WithCacheControl sets Cache-Control: no-cache, private before the handler runs, unless it is set
// already, as kube-apiserver's WithCacheControl filter does for every response (successes, errors,
// health checks, discovery); a handler may still set its own, as the OpenAPI v3 documents served by
// hash do ("public, immutable"). Measured against kube-apiserver v1.37.2. Written here rather than
// imported: kube's is these lines, in a package that would bring the server most of k8s.io/apiserver's
// request filters to start up.
func WithCacheControl(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		if _, ok := h["Cache-Control"]; !ok {
			h["Cache-Control"] = noCache
		}
		next.ServeHTTP(w, r)
	})
}
