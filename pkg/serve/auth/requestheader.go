package auth

import (
	"crypto/x509"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/apictl/apictl/pkg/serve/request"
)

// RequestHeaderConfig configures front-proxy authentication, as kube's --requestheader-* flags do.
type RequestHeaderConfig struct {
	// Roots returns the bundle that verifies proxies' client certificates; it is a function because
	// the bundle is reloaded from disk while the server runs.
	Roots func() *x509.CertPool
	// AllowedNames are the common names a proxy's certificate may have; empty allows any.
	AllowedNames []string
	// UsernameHeaders are tried in order: the first non-empty one names the user.
	UsernameHeaders []string
	// UIDHeaders are tried in order for the UID; every value of every GroupHeaders header is a group.
	UIDHeaders   []string
	GroupHeaders []string
	// ExtraHeaderPrefixes: a header <prefix><key> adds its values to the extra <key>, lower-cased and
	// percent-decoded ("X-Remote-Extra-Foo%2fBar: x" is foo/bar=x).
	ExtraHeaderPrefixes []string
}

// RequestHeader authenticates an authenticating proxy's requests (the aggregation layer's, or a
// front proxy's) with kube's semantics (k8s.io/apiserver headerrequest and x509.Verifier): the client
// certificate must be signed by the request-header CA for client authentication and, when names are
// listed, carry an allowed common name; then the user is the one the headers name, and those headers
// are removed from the request so that nothing downstream mistakes them for the caller's. A
// certificate that does not verify, or whose name is not allowed, is an error (a 401 unless another
// authenticator succeeds); a proxy's request without a user header is not authenticated by this one.
// The proxy itself is never the user: its certificate authenticates as itself only if the client CA
// signed it too.
type RequestHeader struct {
	cfg    RequestHeaderConfig
	chains chainCache
}

var _ Authenticator = (*RequestHeader)(nil)

// NewRequestHeader checks cfg, trimming the header names as kube does; an empty one is an error.
func NewRequestHeader(cfg RequestHeaderConfig) (*RequestHeader, error) {
	if cfg.Roots == nil {
		return nil, fmt.Errorf("request-header authentication needs a CA bundle")
	}
	for _, list := range []*[]string{&cfg.UsernameHeaders, &cfg.UIDHeaders, &cfg.GroupHeaders, &cfg.ExtraHeaderPrefixes} {
		trimmed := make([]string, 0, len(*list))
		for _, h := range *list {
			t := strings.TrimSpace(h)
			if t == "" {
				return nil, fmt.Errorf("empty header %q", h)
			}
			trimmed = append(trimmed, t)
		}
		*list = trimmed
	}
	cfg.AllowedNames = slices.Clone(cfg.AllowedNames)
	return &RequestHeader{cfg: cfg}, nil
}

// AuthenticateRequest verifies the proxy's certificate, then reads the user from the headers.
func (a *RequestHeader) AuthenticateRequest(r *http.Request) (*request.User, bool, error) {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return nil, false, nil
	}
	roots := a.cfg.Roots()
	if roots == nil {
		return nil, false, nil
	}
	v, err := a.chains.verify(r.TLS.PeerCertificates, roots)
	if err != nil {
		return nil, false, err
	}
	if len(a.cfg.AllowedNames) > 0 && !slices.Contains(a.cfg.AllowedNames, v.name) {
		return nil, false, fmt.Errorf("x509: subject with cn=%s is not in the allowed list", v.name)
	}
	name := firstHeaderValue(r.Header, a.cfg.UsernameHeaders)
	if name == "" {
		return nil, false, nil
	}
	u := &request.User{
		Name:   name,
		UID:    firstHeaderValue(r.Header, a.cfg.UIDHeaders),
		Groups: allHeaderValues(r.Header, a.cfg.GroupHeaders),
		Extra:  extraFromHeaders(r.Header, a.cfg.ExtraHeaderPrefixes),
	}
	a.clearHeaders(r.Header)
	return u, true, nil
}

// clearHeaders removes every header the authenticator read.
func (a *RequestHeader) clearHeaders(h http.Header) {
	for _, list := range [][]string{a.cfg.UsernameHeaders, a.cfg.UIDHeaders, a.cfg.GroupHeaders} {
		for _, name := range list {
			h.Del(name)
		}
	}
	for _, prefix := range a.cfg.ExtraHeaderPrefixes {
		for k := range h {
			if hasPrefixFold(k, prefix) {
				delete(h, k) // the raw key: it need not be canonical
			}
		}
	}
}

// firstHeaderValue is the first non-empty value among the headers, in the order given.
func firstHeaderValue(h http.Header, names []string) string {
	for _, name := range names {
		if v := h.Get(name); v != "" {
			return v
		}
	}
	return ""
}

// allHeaderValues collects every non-empty value of the headers, in the order given. Never nil, as
// in kube, whose union then adds system:authenticated.
func allHeaderValues(h http.Header, names []string) []string {
	out := []string{}
	for _, name := range names {
		for _, v := range h[http.CanonicalHeaderKey(name)] {
			if v != "" {
				out = append(out, v)
			}
		}
	}
	return out
}

// extraFromHeaders reads the extras: prefixes first, so that values keep the prefixes' order.
func extraFromHeaders(h http.Header, prefixes []string) map[string][]string {
	out := map[string][]string{}
	for _, prefix := range prefixes {
		for name, values := range h {
			if !hasPrefixFold(name, prefix) {
				continue
			}
			key := strings.ToLower(name[len(prefix):])
			if decoded, err := url.PathUnescape(key); err == nil {
				key = decoded // a malformed escape is kept as sent, as kube keeps it
			}
			out[key] = append(out[key], values...)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}
