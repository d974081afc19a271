package filters

import (
	"net/http"
	"sync/atomic"
)

// WithConnectionClose asks every client to reconnect once closing is set (the shutdown delay): a
// "Connection: close" header, which ends an HTTP/1.1 connection after the response and which Go's
// HTTP/2 server turns into a GOAWAY. Clients then open new connections, which the load balancer sends
// to other replicas or which the closed listener refuses, a failure every client retries, instead of
// sending a request down a keep-alive connection that the drain closes under them: a POST lost that
// way is an EOF that clients do not retry.
func WithConnectionClose(closing *atomic.Bool) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if closing.Load() {
				w.Header().Set("Connection", "close")
			}
			next.ServeHTTP(w, r)
		})
	}
}
