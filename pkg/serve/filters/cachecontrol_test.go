package filters

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
)

// TestCacheControl pins kube-apiserver v1.37.2's answers: no-cache, private on every response,
// whatever its status, unless the handler (or a filter outside) set its own.
func TestCacheControl(t *testing.T) {
	tests := []struct {
		name    string
		code    int
		outside string // set before the filter runs
		handler string // set by the handler
		want    []string
	}{
		{name: "a success", code: http.StatusOK, want: []string{"no-cache, private"}},
		{name: "an error", code: http.StatusNotFound, want: []string{"no-cache, private"}},
		{name: "a redirect", code: http.StatusMovedPermanently, want: []string{"no-cache, private"}},
		{name: "the handler's own", code: http.StatusOK, handler: "public, immutable", want: []string{"public, immutable"}},
		{name: "set outside the filter", code: http.StatusOK, outside: "no-store", want: []string{"no-store"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := WithCacheControl(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tt.handler != "" {
					w.Header().Set("Cache-Control", tt.handler)
				}
				w.WriteHeader(tt.code)
			}))
			rec := httptest.NewRecorder()
			if tt.outside != "" {
				rec.Header().Set("Cache-Control", tt.outside)
			}
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api", nil))
			if got := rec.Result().Header.Values("Cache-Control"); !slices.Equal(got, tt.want) {
				t.Errorf("Cache-Control = %q, want %q", got, tt.want)
			}
		})
	}
	if !slices.Equal(noCache, []string{"no-cache, private"}) {
		t.Errorf("the shared value changed: %q", noCache)
	}
}
