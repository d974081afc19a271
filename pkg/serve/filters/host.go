package filters

import (
	"fmt"
	"net"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apictl/apictl/pkg/serve/status"
)

// WithLoopbackHost answers only requests addressed to a loopback host (localhost, 127.0.0.0/8, ::1)
// and refuses others with a 403 Status. It guards the plain port: a web page can make a browser on
// this machine send requests to 127.0.0.1 under its own name (DNS rebinding), and only the Host header
// tells such requests apart.
func WithLoopbackHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !loopbackHost(r.Host) {
			status.WriteError(w, r, apierrors.NewForbidden(schema.GroupResource{}, "", fmt.Errorf(
				"the plain-HTTP port answers only requests for localhost, 127.0.0.1 or [::1], not Host %q: use the secure port for other names", r.Host)))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// loopbackHost reports whether a Host header (with or without a port) names this machine's loopback
// interface. An empty Host, which only HTTP/1.0 clients send and browsers never do, is let through.
func loopbackHost(host string) bool {
	if host == "" {
		return true
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
