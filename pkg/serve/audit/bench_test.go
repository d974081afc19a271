package audit

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/apictl/apictl/pkg/serve/auth"
	"github.com/apictl/apictl/pkg/serve/filters"
	"github.com/apictl/apictl/pkg/serve/request"
)

// BenchmarkChainAudit is filters' BenchmarkChain (a GET of one object by a token user reaching a
// trivial handler) with the audit filters where the server puts them: "none" without a policy (the
// chain is unchanged), "metadata" with a catch-all Metadata policy writing each request's two events
// to a discarded log, "none-level" with a policy whose only rule is None.
func BenchmarkChainAudit(b *testing.B) {
	for _, tt := range []struct{ name, policy string }{
		{"none", ""},
		{"none-level", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: None\n"},
		{"metadata", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n"},
	} {
		var a *Auditor
		if tt.policy != "" {
			p, err := LoadPolicy(writePolicy(b, tt.policy))
			if err != nil {
				b.Fatal(err)
			}
			if a, err = New(Options{Policy: p, Out: nopCloser{io.Discard}}); err != nil {
				b.Fatal(err)
			}
		}
		h := benchChain(b, a)
		b.Run(tt.name, func(b *testing.B) {
			b.ReportAllocs()
			r := httptest.NewRequest("GET", "/api/v1/namespaces/default/configmaps/app", nil)
			w := &nopWriter{h: http.Header{}}
			for b.Loop() {
				r.Header.Set("Authorization", "Bearer t")
				h.ServeHTTP(w, r.WithContext(request.WithUser(r.Context(), nil)))
			}
		})
	}
}

func benchChain(b *testing.B, a *Auditor) http.Handler {
	discard := slog.New(slog.NewTextHandler(io.Discard, nil))
	m, err := filters.NewMetrics(prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	tokens, _ := auth.ParseTokens(strings.NewReader("t,alice,1,dev\n"))
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	authz := auth.Chain(auth.AlwaysAllow)
	for _, f := range []func(http.Handler) http.Handler{
		filters.WithMaxRequestBody(3 << 20),
		filters.WithAuthorization(a.Authorizer(authz), discard),
		filters.WithMaxInFlightLimit(400, 200, m),
		a.WithAudit,
		filters.WithAuthentication(a.Authenticator(auth.Union(nil, tokens)), discard),
		filters.WithCORS(nil),
		filters.WithTimeout(time.Minute),
		filters.WithMetrics(m, discard),
		filters.WithRequestInfo,
		filters.WithPanicRecovery(discard),
		a.WithInit,
	} {
		h = f(h)
	}
	return h
}

type nopWriter struct{ h http.Header }

func (w *nopWriter) Header() http.Header         { return w.h }
func (w *nopWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *nopWriter) WriteHeader(int)             {}
