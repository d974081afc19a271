package filters

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestMetricsRecordsTheHandlersCode checks the code metrics count whether or not they share the
// recovery filter's recording writer.
func TestMetricsRecordsTheHandlersCode(t *testing.T) {
	notFound := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNotFound) })
	// answered writes a 202 through a recording writer before the rest of the chain runs, so that
	// writer has recorded something metrics did not see.
	answered := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rw := &recordingWriter{ResponseWriter: w}
			rw.WriteHeader(http.StatusAccepted)
			next.ServeHTTP(rw, r)
		})
	}
	for name, wrap := range map[string]func(http.Handler) http.Handler{
		"alone":           func(h http.Handler) http.Handler { return h },
		"inside recovery": WithPanicRecovery(discard),
		"after a write":   answered,
	} {
		t.Run(name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			m, err := NewMetrics(reg)
			if err != nil {
				t.Fatal(err)
			}
			serve(wrap(WithMetrics(m, discard)(notFound)), httptest.NewRequest("GET", "/healthz", nil))
			if got := requestCodes(t, reg); len(got) != 1 || got[0] != "404" {
				t.Errorf("counted codes %v, want [404]", got)
			}
		})
	}
}

// requestCodes returns the code label of every apiserver_request_total series.
func requestCodes(t *testing.T, reg *prometheus.Registry) []string {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	for _, f := range families {
		if f.GetName() != "apiserver_request_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "code" {
					codes = append(codes, l.GetValue())
				}
			}
		}
	}
	return codes
}
