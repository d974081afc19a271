package filters

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/apictl/apictl/pkg/serve/auth"
	"github.com/apictl/apictl/pkg/serve/request"
)

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

func serve(h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func ok() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
}

func TestCORS(t *testing.T) {
	h := WithCORS([]*regexp.Regexp{regexp.MustCompile(`^https://ok\.example$`)})(ok())
	tests := []struct {
		name, method, origin, preflight string
		code                            int
		allowOrigin                     string
	}{
		{name: "no origin", method: "GET", code: 200},
		{name: "allowed", method: "GET", origin: "https://ok.example", code: 200, allowOrigin: "https://ok.example"},
		{name: "not allowed", method: "GET", origin: "https://evil.example", code: 200},
		{name: "preflight", method: "OPTIONS", origin: "https://ok.example", preflight: "PUT", code: 204, allowOrigin: "https://ok.example"},
	}
	for _, tt := range tests {
		r := httptest.NewRequest(tt.method, "/api", nil)
		if tt.origin != "" {
			r.Header.Set("Origin", tt.origin)
		}
		if tt.preflight != "" {
			r.Header.Set("Access-Control-Request-Method", tt.preflight)
		}
		w := serve(h, r)
		if w.Code != tt.code || w.Header().Get("Access-Control-Allow-Origin") != tt.allowOrigin {
			t.Errorf("%s: %d, allow-origin %q", tt.name, w.Code, w.Header().Get("Access-Control-Allow-Origin"))
		}
	}
}

func TestTimeoutAfterTheResponseStarted(t *testing.T) {
	// A handler that began its response is left to finish it, and no 504 follows.
	h := WithTimeout(20 * time.Millisecond)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		<-r.Context().Done()
		_, _ = io.WriteString(w, "finished")
	}))
	if w := serve(h, httptest.NewRequest("GET", "/slow", nil)); w.Code != 503 || w.Body.String() != "finished" {
		t.Errorf("a started response was cut: %d %q", w.Code, w.Body)
	}
}

// A handler that has not answered by the deadline gets the 504 sent for it, at once, while it still
// runs; what it writes later goes nowhere.
func TestTimeoutAnswersForAStuckHandler(t *testing.T) {
	sent := make(chan struct{})
	var lateErr error
	h := WithTimeout(20 * time.Millisecond)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-sent
		_, lateErr = io.WriteString(w, "late")
	}))
	w := &flushRecorder{ResponseRecorder: httptest.NewRecorder(), flushed: sent}
	h.ServeHTTP(w, httptest.NewRequest("GET", "/slow", nil))
	if w.Code != 504 || !strings.Contains(w.Body.String(), `"reason":"Timeout"`) || strings.Contains(w.Body.String(), "late") {
		t.Errorf("got %d %q, want only the 504", w.Code, w.Body)
	}
	if lateErr != http.ErrHandlerTimeout {
		t.Errorf("a write after the 504: %v, want http.ErrHandlerTimeout", lateErr)
	}
}

// flushRecorder reports the first flush, which is when the client would see the response.
type flushRecorder struct {
	*httptest.ResponseRecorder
	flushed chan struct{}
	once    sync.Once
}

func (f *flushRecorder) Flush() {
	f.ResponseRecorder.Flush()
	f.once.Do(func() { close(f.flushed) })
}

// A panic passes the timeout filter on the request's goroutine, and no 504 follows it.
func TestTimeoutLetsPanicsThrough(t *testing.T) {
	h := WithTimeout(time.Minute)(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }))
	w := httptest.NewRecorder()
	func() {
		defer func() {
			if v := recover(); v != "boom" {
				t.Errorf("recovered %v, want the handler's panic", v)
			}
		}()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
	}()
	if w.Code != 200 || w.Body.Len() != 0 {
		t.Errorf("something answered after the panic: %d %q", w.Code, w.Body)
	}
}

func TestTimeoutSparesWatches(t *testing.T) {
	h := WithRequestInfo(WithTimeout(10 * time.Millisecond)(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(50 * time.Millisecond)
		_, _ = io.WriteString(w, "events")
	})))
	if w := serve(h, httptest.NewRequest("GET", "/api/v1/configmaps?watch=true", nil)); w.Code != 200 || w.Body.String() != "events" {
		t.Errorf("watch was cut off: %d %q", w.Code, w.Body)
	}
	if w := serve(h, httptest.NewRequest("GET", "/api/v1/configmaps?timeout=5ms", nil)); w.Code != 504 {
		t.Errorf("list past its timeout: %d", w.Code)
	}
}

func TestMaxRequestBody(t *testing.T) {
	var readErr error
	h := WithMaxRequestBody(8)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, readErr = io.ReadAll(r.Body)
	}))
	if w := serve(h, httptest.NewRequest("POST", "/", strings.NewReader(strings.Repeat("x", 9)))); w.Code != 413 {
		t.Errorf("declared length over the limit: %d", w.Code)
	}
	r := httptest.NewRequest("POST", "/", io.NopCloser(strings.NewReader(strings.Repeat("x", 9))))
	r.ContentLength = -1 // chunked: the length is not known in advance
	serve(h, r)
	var maxErr *http.MaxBytesError
	if readErr == nil || !asMaxBytes(readErr, &maxErr) {
		t.Errorf("reading past the limit = %v, want *http.MaxBytesError", readErr)
	}
}

func asMaxBytes(err error, target **http.MaxBytesError) bool {
	e, ok := err.(*http.MaxBytesError)
	*target = e
	return ok
}

func TestPanicAbortIsReraised(t *testing.T) {
	h := WithPanicRecovery(discard)(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) }))
	defer func() {
		if v := recover(); v != http.ErrAbortHandler {
			t.Errorf("got %v", v)
		}
	}()
	serve(h, httptest.NewRequest("GET", "/", nil))
}

// BenchmarkChain measures what the filters add to a request that reaches a trivial handler: a GET of
// one object by an authenticated user, as on the secure port.
func BenchmarkChain(b *testing.B) {
	m, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	tokens, _ := auth.ParseTokens(strings.NewReader("t,alice,1,dev\n"))
	var h http.Handler = ok()
	for _, f := range []func(http.Handler) http.Handler{
		WithMaxRequestBody(3 << 20),
		WithAuthorization(auth.Chain(auth.AlwaysAllow), discard),
		WithMaxInFlightLimit(400, 200, m),
		WithAuthentication(auth.Union(nil, tokens), discard),
		WithCORS(nil),
		WithTimeout(time.Minute),
		WithMetrics(m, discard),
		WithRequestInfo,
		WithPanicRecovery(discard),
	} {
		h = f(h)
	}
	b.Run("chain", func(b *testing.B) { benchHandler(b, h) })
	b.Run("bare", func(b *testing.B) { benchHandler(b, ok()) })
}

func benchHandler(b *testing.B, h http.Handler) {
	b.ReportAllocs()
	r := httptest.NewRequest("GET", "/api/v1/namespaces/default/configmaps/app", nil)
	w := &nopWriter{h: http.Header{}}
	base := r.Context()
	for b.Loop() {
		r.Header.Set("Authorization", "Bearer t")
		// Each request's context can be cancelled, as HTTP/2 gives every stream: a deadline or an
		// AfterFunc under it costs what it costs on the server.
		ctx, cancel := context.WithCancel(base)
		h.ServeHTTP(w, r.WithContext(request.WithUser(ctx, nil)))
		cancel()
	}
}

type nopWriter struct{ h http.Header }

func (w *nopWriter) Header() http.Header         { return w.h }
func (w *nopWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *nopWriter) WriteHeader(int)             {}
