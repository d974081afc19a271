package filters

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/apictl/apictl/pkg/serve/status"
)

// panicMessage is kube's text for a request that panicked.
const panicMessage = "This request caused apiserver to panic. Look in the logs for details."

// WithPanicRecovery turns a panic in a handler into a 500 Status and a logged stack, so one bad
// request cannot take the server down. http.ErrAbortHandler is re-raised: it is how a handler asks
// net/http to drop the connection.
func WithPanicRecovery(log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rw := &recordingWriter{ResponseWriter: w}
			defer func() {
				v := recover()
				if v == nil {
					return
				}
				if err, ok := v.(error); ok && errors.Is(err, http.ErrAbortHandler) {
					panic(v)
				}
				log.Error("a request panicked", "method", r.Method, "path", r.URL.Path, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				if rw.code != 0 {
					// The response has started; a Status can no longer be sent, so drop the connection.
					panic(http.ErrAbortHandler)
				}
				//lint:ignore ST1005 kube's message, which clients see
				status.WriteError(rw, r, apierrors.NewInternalError(errors.New(panicMessage)))
			}()
			next.ServeHTTP(rw, r)
		})
	}
}
