package filters

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestWithGrownStackServesEveryMethod(t *testing.T) {
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		served := false
		h := WithGrownStack(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { served = true }))
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(m, "/api", nil))
		if !served {
			t.Errorf("%s: the next handler did not run", m)
		}
	}
}

// deep recurses n frames of about 200 bytes each, as decoding and managed-fields walks do.
//
//go:noinline
func deep(n int) byte {
	var pad [192]byte
	if n == 0 {
		return pad[n]
	}
	return deep(n-1) + pad[n%len(pad)]
}

// BenchmarkDeepRequest measures what WithGrownStack is for: a new goroutine (as HTTP/2 starts for
// every request) going 120 frames deep, with its stack grown while shallow or left to grow.
func BenchmarkDeepRequest(b *testing.B) {
	for _, grow := range []bool{false, true} {
		name := "grown-by-need"
		if grow {
			name = "grown-up-front"
		}
		b.Run(name, func(b *testing.B) {
			done := make(chan byte)
			for b.Loop() {
				go func() {
					if grow {
						growStack(0)
					}
					done <- deep(120)
				}()
				<-done
			}
		})
	}
}
