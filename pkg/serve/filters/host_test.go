package filters

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestWithLoopbackHost(t *testing.T) {
	h := WithLoopbackHost(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	tests := []struct {
		host string
		want int
	}{
		{"127.0.0.1:8080", 200}, {"127.0.0.1", 200}, {"127.1.2.3:80", 200}, {"localhost:8080", 200},
		{"LOCALHOST", 200}, {"[::1]:8080", 200}, {"[::1]", 200}, {"", 200},
		{"evil.example", 403}, {"evil.example:8080", 403}, {"localhost.evil.example", 403},
		{"10.0.0.5:8080", 403}, {"0.0.0.0:8080", 403}, {"[::]:8080", 403}, {"127.0.0.1.nip.io", 403},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/api", nil)
			r.Host = tt.host
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tt.want {
				t.Fatalf("Host %q: %d, want %d", tt.host, w.Code, tt.want)
			}
			if tt.want == 403 && !strings.Contains(w.Body.String(), `"reason":"Forbidden"`) {
				t.Errorf("403 without a Forbidden Status: %s", w.Body)
			}
		})
	}
}
