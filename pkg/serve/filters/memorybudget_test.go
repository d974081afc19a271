package filters

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apictl/apictl/pkg/serve/request"
)

// budgetRequest is a request as the filter sees it after WithRequestInfo.
func budgetRequest(method, path string) *http.Request {
	r := httptest.NewRequest(method, path, nil)
	return r.WithContext(request.WithRequestInfo(r.Context(), request.NewRequestInfo(r)))
}

func TestMemoryBudgetListBytes(t *testing.T) {
	m := NewMemoryBudget(1<<30, time.Second, func(group, resource string) (int64, bool) {
		switch resource {
		case "configmaps":
			return 10 << 10, true
		case "secrets":
			return 1 << 30, true
		}
		return 0, false
	})
	for _, tc := range []struct {
		resource string
		want     int64
	}{
		{"configmaps", minListBytes}, // 20 KiB, charged the least
		{"secrets", ListWindowBytes}, // streamed: a window, however long
		{"widgets", ListWindowBytes}, // unknown: as if long
	} {
		if got := m.ListBytes("", tc.resource); got != tc.want {
			t.Errorf("ListBytes(%s) = %d, want %d", tc.resource, got, tc.want)
		}
	}
}

// TestMemoryBudget runs a LIST that holds its charge until released, then asks for another.
func TestMemoryBudget(t *testing.T) {
	const cost = ListWindowBytes
	for _, tc := range []struct {
		name string
		// budget and heap are the budget and the live heap the collector last found.
		budget, heap int64
		second       *http.Request
		// release ends the first LIST while the second waits.
		release  bool
		wantCode int
		// wantWait is whether the second request waited for the first.
		wantWait bool
	}{
		{name: "room for both", budget: 4 * cost, heap: cost, second: budgetRequest("GET", "/api/v1/configmaps"), wantCode: 200},
		{name: "waits for the first to end", budget: 3 * cost, heap: cost, second: budgetRequest("GET", "/api/v1/configmaps"),
			release: true, wantCode: 200, wantWait: true},
		{name: "heap over budget: 429 after the wait", budget: 8 * cost, heap: 8 * cost, second: budgetRequest("GET", "/api/v1/namespaces/a/configmaps"),
			wantCode: http.StatusTooManyRequests, wantWait: true},
		{name: "a GET never waits", budget: 2 * cost, heap: 8 * cost, second: budgetRequest("GET", "/api/v1/namespaces/a/configmaps/x"), wantCode: 200},
		{name: "a watch never waits", budget: 2 * cost, heap: 8 * cost, second: budgetRequest("GET", "/api/v1/configmaps?watch=1"), wantCode: 200},
		{name: "no budget", budget: 0, heap: 8 * cost, second: budgetRequest("GET", "/api/v1/configmaps"), wantCode: 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewMemoryBudget(tc.budget, 300*time.Millisecond, nil)
			var heap atomic.Int64
			heap.Store(tc.heap)
			m.heapLive = heap.Load
			hold := make(chan struct{})
			var holding atomic.Bool
			h := m.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Query().Get("hold") != "" {
					holding.Store(true)
					<-hold
				}
				w.WriteHeader(http.StatusOK)
			}))
			firstDone := make(chan struct{})
			go func() {
				defer close(firstDone)
				h.ServeHTTP(httptest.NewRecorder(), budgetRequest("GET", "/api/v1/secrets?hold=1"))
			}()
			for !holding.Load() {
				time.Sleep(time.Millisecond)
			}
			if tc.release {
				time.AfterFunc(100*time.Millisecond, func() { close(hold) })
			}
			began := time.Now()
			w := httptest.NewRecorder()
			h.ServeHTTP(w, tc.second)
			waited := time.Since(began) >= 90*time.Millisecond
			if !tc.release {
				close(hold)
			}
			<-firstDone
			if w.Code != tc.wantCode || waited != tc.wantWait {
				t.Fatalf("got %d after %s, want %d (wait: %t): %s", w.Code, time.Since(began), tc.wantCode, tc.wantWait, w.Body)
			}
			if w.Code == http.StatusTooManyRequests {
				var s metav1.Status
				if err := json.Unmarshal(w.Body.Bytes(), &s); err != nil || s.Reason != metav1.StatusReasonTooManyRequests ||
					s.Message != tooManyRequestsMessage || w.Header().Get("Retry-After") != "1" {
					t.Errorf("429 answer: %v %+v, Retry-After %q", err, s, w.Header().Get("Retry-After"))
				}
			}
			if m.budget > 0 && m.Running() != 0 {
				t.Errorf("%d bytes still charged after both ended", m.Running())
			}
		})
	}
}
