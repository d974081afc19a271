package serve

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apictl/apictl/pkg/serve/status"
)

// Mux routes by exact path, then by the longest registered prefix. Paths it does not know get a 404
// NotFound Status, as kube's API does for unknown resources.
type Mux struct {
	mu       sync.RWMutex
	exact    map[string]http.Handler
	prefixes []prefixHandler // longest first
}

type prefixHandler struct {
	prefix  string
	handler http.Handler
}

// NewMux returns an empty mux.
func NewMux() *Mux { return &Mux{exact: map[string]http.Handler{}} }

// Handle serves path exactly.
func (m *Mux) Handle(path string, h http.Handler) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.exact[path] = h
}

// HandlePrefix serves every path under prefix (which should end in "/").
func (m *Mux) HandlePrefix(prefix string, h http.Handler) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.prefixes = append(m.prefixes, prefixHandler{prefix: prefix, handler: h})
	sort.SliceStable(m.prefixes, func(i, j int) bool { return len(m.prefixes[i].prefix) > len(m.prefixes[j].prefix) })
}

// Paths lists the paths served, for the index at /: exact paths, and prefixes without their slash.
func (m *Mux) Paths() []string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	seen := map[string]bool{}
	for p := range m.exact {
		if p != "/" && !strings.HasSuffix(p, "/") {
			seen[p] = true
		}
	}
	for _, p := range m.prefixes {
		seen[strings.TrimSuffix(p.prefix, "/")] = true
	}
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// ServeHTTP dispatches r.
func (m *Mux) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.mu.RLock()
	h, ok := m.exact[r.URL.Path]
	if !ok {
		for _, p := range m.prefixes {
			if strings.HasPrefix(r.URL.Path, p.prefix) {
				h, ok = p.handler, true
				break
			}
		}
	}
	m.mu.RUnlock()
	if !ok {
		NotFound(w, r)
		return
	}
	h.ServeHTTP(w, r)
}

// NotFound is kube's answer for a path it does not serve.
func NotFound(w http.ResponseWriter, _ *http.Request) {
	status.Write(w, &metav1.Status{
		Status:  metav1.StatusFailure,
		Message: "the server could not find the requested resource",
		Reason:  metav1.StatusReasonNotFound,
		Details: &metav1.StatusDetails{},
		Code:    http.StatusNotFound,
	})
}

// indexHandler serves {"paths":[...]} at /, as kube does.
func indexHandler(paths func() []string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := json.MarshalIndent(struct {
			Paths []string `json:"paths"`
		}{paths()}, "", "  ")
		if err != nil {
			status.WriteError(w, err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body)
	})
}
