package filters

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apictl/apictl/pkg/serve/request"
	"github.com/apictl/apictl/pkg/serve/status"
)

// WithTimeout bounds every request that is not long-running by --request-timeout, or by ?timeout= when
// that is shorter, and answers 504 with kube's Timeout Status when the handler overruns.
//
// The handler runs on the request's goroutine with the deadline in its context, which every storage
// call honours; only when the deadline passes does a goroutine start (context.AfterFunc) to send the
// 504, unless the handler has begun its response, which it is then left to finish: apictl's handlers
// write a response whole, so finishing never means a response cut short. The handler's later writes go
// nowhere. Kube starts a goroutine for every request instead, which costs more than the rest of a
// cached GET.
func WithTimeout(requestTimeout time.Duration) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			info, _ := request.RequestInfoFrom(r.Context())
			if IsLongRunning(info) {
				next.ServeHTTP(w, r)
				return
			}
			timeout := requestTimeout
			if strings.Contains(r.URL.RawQuery, "timeout=") {
				if q := r.URL.Query().Get("timeout"); q != "" {
					d, err := time.ParseDuration(q)
					if err != nil {
						status.WriteError(w, r, apierrors.NewBadRequest("invalid timeout specified in the request URL"))
						return
					}
					if d > 0 && d < timeout {
						timeout = d
					}
				}
			}
			ctx, cancel := context.WithTimeout(r.Context(), timeout)
			defer cancel()
			tw := &timeoutWriter{w: w, pretty: status.Pretty(r)}
			fired := make(chan struct{})
			// context.AfterFunc rather than a timer of its own, though that would save four
			// allocations per request: a second timer fires after ctx's deadline, on its own
			// goroutine, and a handler that answers its own error to the deadline then wins most
			// races (seven in ten, in review), where kube answers its Timeout Status.
			stop := context.AfterFunc(ctx, func() {
				defer close(fired)
				// A client that went away cancels the context too: nobody is left to answer.
				if r.Context().Err() == nil {
					tw.timeout()
				}
			})
			// Deferred, and so before cancel, so that a panic on its way to the recovery filter does
			// not let the cancel fire a 504 behind it.
			defer func() {
				if !stop() {
					// The 504 is being written: the response is the server's again only once it is.
					<-fired
				}
			}()
			next.ServeHTTP(tw, r.WithContext(ctx))
		})
	}
}

// timeoutStatus is kube's 504 body. Kube encodes it without kind and apiVersion; we keep them, as
// every other Status has them and clients ignore neither.
func timeoutStatus() *metav1.Status {
	return &metav1.Status{
		Status:  metav1.StatusFailure,
		Message: "Timeout: request did not complete within the allotted timeout",
		Reason:  metav1.StatusReasonTimeout,
		Details: &metav1.StatusDetails{},
		Code:    http.StatusGatewayTimeout,
	}
}

// timeoutWriter passes writes through until the deadline, then refuses them. The handler writes its
// headers into a map of its own, copied out on WriteHeader, so that the goroutine sending a 504 never
// shares a map with it.
type timeoutWriter struct {
	w      http.ResponseWriter
	pretty bool // the 504's indentation, decided before the handler runs and changes the request
	header http.Header

	mu          sync.Mutex
	timedOut    bool
	wroteHeader bool
}

func (tw *timeoutWriter) Header() http.Header {
	if tw.header == nil {
		tw.header = make(http.Header, 2)
	}
	return tw.header
}

func (tw *timeoutWriter) WriteHeader(code int) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.timedOut || tw.wroteHeader {
		return
	}
	tw.writeHeaderLocked(code)
}

func (tw *timeoutWriter) writeHeaderLocked(code int) {
	dst := tw.w.Header()
	for k, v := range tw.header {
		dst[k] = v
	}
	tw.wroteHeader = true
	tw.w.WriteHeader(code)
}

func (tw *timeoutWriter) Write(b []byte) (int, error) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.timedOut {
		return 0, http.ErrHandlerTimeout
	}
	if !tw.wroteHeader {
		tw.writeHeaderLocked(http.StatusOK)
	}
	return tw.w.Write(b)
}

func (tw *timeoutWriter) Flush() {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.timedOut {
		return
	}
	if !tw.wroteHeader {
		tw.writeHeaderLocked(http.StatusOK)
	}
	if f, ok := tw.w.(http.Flusher); ok {
		f.Flush()
	}
}

// timeout sends the 504 and refuses the handler's later writes, unless the handler has already started
// its response, which it is then left to finish. It reports whether the 504 was sent.
func (tw *timeoutWriter) timeout() bool {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.wroteHeader {
		return false
	}
	tw.timedOut = true
	tw.wroteHeader = true
	status.WriteAs(tw.w, tw.pretty, timeoutStatus())
	// The handler still holds the request: push the answer out now rather than when it returns.
	if f, ok := tw.w.(http.Flusher); ok {
		f.Flush()
	}
	return true
}
