package filters

import (
	"context"
	"net/http"
	"runtime/metrics"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/apictl/apictl/pkg/serve/request"
	"github.com/apictl/apictl/pkg/serve/status"
)

// ListWindowBytes is the most a streamed LIST holds at once, whatever its length: a 256 KiB chunk and
// its indented or compressed copy, and a conversion batch of 500 decoded objects (pkg/serve/handlers).
// A LIST smaller than its estimate in stored bytes holds about twice that (stored and encoded).
const ListWindowBytes = 4 << 20

// minListBytes is what the smallest LIST is charged: its buffers and decoding, whatever it returns.
const minListBytes = 64 << 10

// MemoryBudget holds the server's heap under a budget (--memory-budget). The LIST is the request
// whose memory grows with the data, so a new LIST starts only when the live heap and the LISTs
// running leave room for what it will hold at once (ListBytes). Otherwise it waits for a LIST to end
// or the collector to free memory, in arrival order, up to waitLimit, then gets 429 with
// Retry-After as the in-flight limits answer. With priority and fairness on, APF bounds how many
// requests run and this bounds their bytes: a LIST is charged by the same estimate of the objects
// its watch cache holds that APF charges seats by.
type MemoryBudget struct {
	budget    int64
	waitLimit time.Duration
	// estimate is a LIST's stored bytes (objects × their average size), false when unknown.
	estimate func(group, resource string) (int64, bool)
	// heapLive reads the heap the last collection found live (runtime/metrics).
	heapLive func() int64

	mu      sync.Mutex
	running int64
	// queue holds the waiting LISTs in arrival order; the head is woken when something ends.
	queue []chan struct{}
}

// NewMemoryBudget returns a budget of budget bytes (0: none). estimate may be nil.
func NewMemoryBudget(budget int64, waitLimit time.Duration, estimate func(group, resource string) (int64, bool)) *MemoryBudget {
	return &MemoryBudget{budget: budget, waitLimit: waitLimit, estimate: estimate, heapLive: readHeapLive}
}

// ListBytes is what a LIST of resource is charged: twice its estimated stored bytes, at least
// minListBytes and at most ListWindowBytes, which is all a streamed list holds at once.
func (m *MemoryBudget) ListBytes(group, resource string) int64 {
	if m.estimate == nil {
		return ListWindowBytes
	}
	n, ok := m.estimate(group, resource)
	if !ok {
		return ListWindowBytes
	}
	return min(max(2*n, minListBytes), ListWindowBytes)
}

// Wrap is the filter: LISTs wait for room in the budget; everything else passes.
func (m *MemoryBudget) Wrap(next http.Handler) http.Handler {
	if m == nil || m.budget <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info, _ := request.RequestInfoFrom(r.Context())
		if info == nil || !info.IsResourceRequest || info.Verb != "list" {
			next.ServeHTTP(w, r)
			return
		}
		cost := m.ListBytes(info.APIGroup, info.Resource)
		if !m.acquire(r.Context(), cost) {
			s := apierrors.NewTooManyRequests(tooManyRequestsMessage, 1).Status()
			status.WriteWithRetryAfter(w, r, &s, 1)
			return
		}
		defer m.release(cost)
		next.ServeHTTP(w, r)
	})
}

// fits reports whether cost fits beside the running LISTs and the live heap; m.mu is held.
func (m *MemoryBudget) fits(cost int64) bool {
	// The first LIST always runs: a budget smaller than one LIST must still serve LISTs one at a time.
	if m.running == 0 {
		return true
	}
	return m.running+cost <= m.budget/2 && m.heapLive()+cost <= m.budget
}

// acquire waits, in arrival order, until cost fits or waitLimit or ctx ends.
func (m *MemoryBudget) acquire(ctx context.Context, cost int64) bool {
	m.mu.Lock()
	if len(m.queue) == 0 && m.fits(cost) {
		m.running += cost
		m.mu.Unlock()
		return true
	}
	turn := make(chan struct{}, 1)
	m.queue = append(m.queue, turn)
	m.mu.Unlock()

	deadline := time.NewTimer(m.waitLimit)
	defer deadline.Stop()
	// The heap shrinks when the collector runs, which nothing signals: the head looks again now
	// and then as well as when a LIST ends.
	recheck := time.NewTicker(50 * time.Millisecond)
	defer recheck.Stop()
	for {
		select {
		case <-turn:
		case <-recheck.C:
		case <-deadline.C:
			m.leave(turn)
			return false
		case <-ctx.Done():
			m.leave(turn)
			return false
		}
		m.mu.Lock()
		if m.queue[0] == turn && m.fits(cost) {
			m.queue = m.queue[1:]
			m.running += cost
			m.wakeHead()
			m.mu.Unlock()
			return true
		}
		m.mu.Unlock()
	}
}

// leave takes a waiter that gave up out of the queue.
func (m *MemoryBudget) leave(turn chan struct{}) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, t := range m.queue {
		if t == turn {
			m.queue = append(m.queue[:i], m.queue[i+1:]...)
			break
		}
	}
	m.wakeHead()
}

func (m *MemoryBudget) release(cost int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.running -= cost
	m.wakeHead()
}

// wakeHead tells the first waiter to look again; m.mu is held.
func (m *MemoryBudget) wakeHead() {
	if len(m.queue) == 0 {
		return
	}
	select {
	case m.queue[0] <- struct{}{}:
	default:
	}
}

// Running is the bytes the running LISTs are charged, for the metrics and tests.
func (m *MemoryBudget) Running() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.running
}

// readHeapLive is the heap the last collection marked live: cheap to read, unlike MemStats, which
// stops the world.
func readHeapLive() int64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
}
