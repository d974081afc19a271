package filters

import (
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/apictl/apictl/pkg/serve/request"
)

// Metrics are the request metrics, under kube's names and labels so that existing dashboards work.
type Metrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	inflight *prometheus.GaugeVec
}

// NewMetrics registers the request metrics with reg; each server has its own registry.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apiserver_request_total",
			Help: "Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.",
		}, []string{"verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "apiserver_request_duration_seconds",
			Help:    "Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.",
			Buckets: []float64{0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60},
		}, []string{"verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component"}),
		inflight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "apiserver_current_inflight_requests",
			Help: "Maximal number of currently used inflight request limit of this apiserver per request kind in last second.",
		}, []string{"request_kind"}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.latency, m.inflight} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// WithMetrics counts and times every request and writes an access log line at debug level (-v 4).
func WithMetrics(m *Metrics, log *slog.Logger) func(http.Handler) http.Handler {
	const component = "apiserver"
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			// Recovery, just outside in the chain, already records the response: share its writer
			// rather than wrap it again. One that has seen a write already belongs to more than what
			// this filter wraps, so it gets a wrapper of its own.
			rw, ok := w.(*recordingWriter)
			if !ok || rw.code != 0 || rw.written != 0 {
				rw = &recordingWriter{ResponseWriter: w}
			}
			// The user is known only inside authentication, whose context this filter cannot see: when
			// the access log is on, the inner filters fill in a record of who the request ran as.
			var rec *request.AccessRecord
			if log.Enabled(r.Context(), slog.LevelDebug) {
				rec = &request.AccessRecord{}
				r = r.WithContext(request.WithAccessRecord(r.Context(), rec))
			}
			next.ServeHTTP(rw, r)
			elapsed := time.Since(start)
			info, _ := request.RequestInfoFrom(r.Context())
			verb, group, version, resource, subresource, scope := metricLabels(r, info)
			dryRun := dryRunLabel(r)
			code := strconv.Itoa(rw.status())
			m.requests.WithLabelValues(verb, dryRun, group, version, resource, subresource, scope, component, code).Inc()
			m.latency.WithLabelValues(verb, dryRun, group, version, resource, subresource, scope, component).Observe(elapsed.Seconds())
			if rec != nil {
				user := ""
				if rec.User != nil {
					user = rec.User.Name
				}
				attrs := []any{"verb", verb, "URI", r.RequestURI, "latency", elapsed, "userAgent", r.UserAgent(),
					"user", user, "srcIP", r.RemoteAddr, "resp", rw.status(), "bytes", rw.written}
				if rec.Impersonator != nil {
					attrs = append(attrs, "impersonatedBy", rec.Impersonator.Name)
				}
				log.Debug("HTTP", attrs...)
			}
		})
	}
}

// metricLabels maps a request to kube's metric labels: verbs upper-cased, LIST and WATCH told apart,
// APPLY for server-side apply, scope one of resource, namespace or cluster.
func metricLabels(r *http.Request, info *request.RequestInfo) (verb, group, version, resource, subresource, scope string) {
	if info == nil || !info.IsResourceRequest {
		return strings.ToUpper(r.Method), "", "", "", "", ""
	}
	verb = strings.ToUpper(info.Verb)
	if info.Verb == "patch" && r.Header.Get("Content-Type") == "application/apply-patch+yaml" {
		verb = "APPLY"
	}
	switch {
	case info.Name != "" && (info.Verb != "list" && info.Verb != "watch"):
		scope = "resource"
	case info.Namespace != "":
		scope = "namespace"
	default:
		scope = "cluster"
	}
	return verb, info.APIGroup, info.APIVersion, info.Resource, info.Subresource, scope
}

func dryRunLabel(r *http.Request) string {
	if !strings.Contains(r.URL.RawQuery, "dryRun") {
		return "" // most requests: no query to parse
	}
	return strings.Join(r.URL.Query()["dryRun"], ",")
}
