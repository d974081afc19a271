package filters

import (
	"context"
	"net/http"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apictl/apictl/pkg/serve/request"
	"github.com/apictl/apictl/pkg/serve/status"
)

// WithTimeout bounds every request that is not long-running by --request-timeout, or by ?timeout= when
// that is shorter, and answers 504 with kube's Timeout Status when the handler overruns. The handler
// runs on its own goroutine so that one that ignores its context still cannot hold the client; it
// keeps running until it returns, but its writes go nowhere.
func WithTimeout(requestTimeout time.Duration) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			info, _ := request.RequestInfoFrom(r.Context())
			if IsLongRunning(info) {
				next.ServeHTTP(w, r)
				return
			}
			timeout := requestTimeout
			if q := r.URL.Query().Get("timeout"); q != "" {
				d, err := time.ParseDuration(q)
				if err != nil {
					status.WriteError(w, apierrors.NewBadRequest("invalid timeout specified in the request URL"))
					return
				}
				if d > 0 && d < timeout {
					timeout = d
				}
			}
			ctx, cancel := context.WithTimeout(r.Context(), timeout)
			defer cancel()
			tw := &timeoutWriter{w: w, header: make(http.Header)}
			done := make(chan struct{})
			var panicked any
			// The inner request gets its own header map: filters inside (authentication drops the
			// Authorization header) may still be changing it after a timeout, while filters outside
			// read it.
			inner := r.WithContext(ctx)
			inner.Header = r.Header.Clone()
			go func() {
				defer close(done)
				defer func() { panicked = recover() }()
				next.ServeHTTP(tw, inner)
			}()
			select {
			case <-done:
				if panicked != nil {
					panic(panicked) // to the recovery filter, on the request's goroutine
				}
			case <-ctx.Done():
				if tw.timeout() {
					return
				}
				// The handler started its response, most often an error for this very deadline, which
				// its storage calls share. Let it finish for a moment; a response still unfinished
				// then is cut off, since a Status can no longer follow it.
				select {
				case <-done:
					if panicked != nil {
						panic(panicked)
					}
				case <-time.After(startedResponseGrace):
					panic(http.ErrAbortHandler)
				}
			}
		})
	}
}

// startedResponseGrace is how long a handler that began its response before the deadline may take to
// finish it.
const startedResponseGrace = time.Second

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
// headers into a map of its own, copied out on WriteHeader, so the two goroutines never share one.
type timeoutWriter struct {
	w      http.ResponseWriter
	header http.Header

	mu          sync.Mutex
	timedOut    bool
	wroteHeader bool
}

func (tw *timeoutWriter) Header() http.Header { return tw.header }

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
	status.Write(tw.w, timeoutStatus())
	return true
}
