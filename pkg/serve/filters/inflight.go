package filters

import (
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/apictl/apictl/pkg/serve/request"
	"github.com/apictl/apictl/pkg/serve/status"
)

// tooManyRequestsMessage is kube's text for a request rejected by the in-flight limit.
const tooManyRequestsMessage = "Too many requests, please try again later."

// WithMaxInFlightLimit rejects requests beyond the limits with 429 and Retry-After: 1, which
// client-go retries. Reads and writes have separate limits (0: no limit); long-running requests and
// system:masters are exempt, as in kube. It never queues: a busy server answers at once.
func WithMaxInFlightLimit(readOnly, mutating int, m *Metrics) func(http.Handler) http.Handler {
	var readCh, mutatingCh chan struct{}
	if readOnly > 0 {
		readCh = make(chan struct{}, readOnly)
	}
	if mutating > 0 {
		mutatingCh = make(chan struct{}, mutating)
	}
	readGauge := m.inflight.WithLabelValues("readOnly")
	mutatingGauge := m.inflight.WithLabelValues("mutating")
	return func(next http.Handler) http.Handler {
		if readCh == nil && mutatingCh == nil {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			info, _ := request.RequestInfoFrom(r.Context())
			if IsLongRunning(info) {
				next.ServeHTTP(w, r)
				return
			}
			if u, ok := request.UserFrom(r.Context()); ok && u.InGroup(request.GroupMasters) {
				next.ServeHTTP(w, r)
				return
			}
			ch, gauge := readCh, readGauge
			if isMutating(r) {
				ch, gauge = mutatingCh, mutatingGauge
			}
			if ch == nil {
				next.ServeHTTP(w, r)
				return
			}
			select {
			case ch <- struct{}{}:
				gauge.Inc()
				defer func() {
					<-ch
					gauge.Dec()
				}()
				next.ServeHTTP(w, r)
			default:
				s := apierrors.NewTooManyRequests(tooManyRequestsMessage, 1).Status()
				status.WriteWithRetryAfter(w, r, &s, 1)
			}
		})
	}
}
