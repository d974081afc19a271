package bench

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// coreStub is the smallest core API the upstream apiextensions-apiserver runs against. That server
// is built to sit beside a kube-apiserver: its --kubeconfig, --authentication-kubeconfig and
// --authorization-kubeconfig must name one, its admission plugins list and watch namespaces and
// admission configurations through it, and it delegates bearer tokens (TokenReview) and
// authorization (SubjectAccessReview) to it. The stub answers exactly that: the namespaces it was
// given, a list (empty unless setLists gave it items) and a watch that stays quiet for every other
// collection, TokenReviews that accept one token as a member of system:masters, and
// SubjectAccessReviews that allow everything. The bare rows' client presents a system:masters
// certificate, which skips both reviews; with features on, the client is outside system:masters, so
// the upstream server asks the stub's SubjectAccessReviews, as it asks kube-apiserver in a cluster,
// and caches the answers.
type coreStub struct {
	url string
	// token is the bearer token the stub's TokenReviews accept.
	token      string
	namespaces []string
	srv        *http.Server
	// quit ends the watches the stub holds open, so that shutting down does not wait for them.
	quit   chan struct{}
	served chan error
	mu     sync.Mutex
	// lists are the items of the collections that are not empty, by path (setLists).
	lists map[string][]any
	// requests counts what the stub was asked, by method and path, for the report.
	requests map[stubRequest]int
}

// stubRequest is one kind of request the stub counts.
type stubRequest struct {
	method, path string
	watch        bool
}

// stubUser is who the stub's TokenReviews say the token belongs to.
const stubUser = "bench-peer"

// startCoreStub serves the stub over TLS with cert on a loopback port of the OS's choosing.
func startCoreStub(cert tls.Certificate, token string, namespaces []string) (*coreStub, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("starting the core API stub: %w", err)
	}
	s := &coreStub{
		url:        "https://" + ln.Addr().String(),
		token:      token,
		namespaces: namespaces,
		quit:       make(chan struct{}),
		served:     make(chan error, 1),
		requests:   map[stubRequest]int{},
	}
	s.srv = &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
	}
	go func() { s.served <- s.srv.ServeTLS(ln, "", "") }()
	return s, nil
}

// stop ends the open watches and the server, and waits for it.
func (s *coreStub) stop() error {
	close(s.quit)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if e := <-s.served; !errors.Is(e, http.ErrServerClosed) {
		err = errors.Join(err, e)
	}
	if err != nil {
		return fmt.Errorf("stopping the core API stub: %w", err)
	}
	return nil
}

// asked lists what the stub was asked, sorted: "GET /api/v1/namespaces (2 lists, 4 watches)".
func (s *coreStub) asked() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	type counts struct{ plain, watches int }
	byPath := map[string]*counts{}
	for k, n := range s.requests {
		key := k.method + " " + k.path
		c := byPath[key]
		if c == nil {
			c = &counts{}
			byPath[key] = c
		}
		if k.watch {
			c.watches += n
		} else {
			c.plain += n
		}
	}
	out := make([]string, 0, len(byPath))
	for key, c := range byPath {
		var parts []string
		if c.plain > 0 {
			parts = append(parts, strconv.Itoa(c.plain)+" plain")
		}
		if c.watches > 0 {
			parts = append(parts, strconv.Itoa(c.watches)+" watch")
		}
		out = append(out, key+" ("+strings.Join(parts, ", ")+")")
	}
	sort.Strings(out)
	return out
}

// setLists gives the collections at the paths of lists their items, for the servers that list them
// from now on (nil: every collection empty again). Watches stay quiet: a server sees the items at
// its start.
func (s *coreStub) setLists(lists map[string][]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lists = lists
}

func (s *coreStub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	watch := r.URL.Query().Get("watch")
	s.mu.Lock()
	s.requests[stubRequest{method: r.Method, path: r.URL.Path, watch: watch == "true" || watch == "1"}]++
	s.mu.Unlock()

	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/apis/authentication.k8s.io/v1/tokenreviews":
		s.tokenReview(w, r)
	case r.Method == http.MethodPost && r.URL.Path == "/apis/authorization.k8s.io/v1/subjectaccessreviews":
		s.accessReview(w, r)
	case r.Method != http.MethodGet:
		writeStubStatus(w, http.StatusMethodNotAllowed, "MethodNotAllowed")
	case r.URL.Path == "/openapi/v3":
		// Asked now and then by the upstream server's admission policies for the core API's
		// schemas; there are none.
		writeStubJSON(w, http.StatusOK, map[string]any{"paths": map[string]any{}})
	case r.URL.Path == "/version":
		writeStubJSON(w, http.StatusOK, map[string]string{"major": "1", "minor": "37", "gitVersion": "v1.37.2"})
	case (watch == "true" || watch == "1") && r.URL.Query().Get("sendInitialEvents") == "true":
		// A watch-list stream would have to end its initial events with a bookmark of the watched
		// kind; refusing it makes client-go's reflectors fall back to a LIST, which needs no kind.
		writeStubStatus(w, http.StatusBadRequest, "BadRequest")
	case watch == "true" || watch == "1":
		// Nothing the stub serves ever changes.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		http.NewResponseController(w).Flush()
		select {
		case <-r.Context().Done():
		case <-s.quit:
		}
	case r.URL.Path == "/api/v1/namespaces":
		items := make([]any, len(s.namespaces))
		for i, ns := range s.namespaces {
			items[i] = stubNamespace(ns)
		}
		writeStubJSON(w, http.StatusOK, map[string]any{"apiVersion": "v1", "kind": "NamespaceList",
			"metadata": map[string]string{"resourceVersion": "1"}, "items": items})
	case strings.HasPrefix(r.URL.Path, "/api/v1/namespaces/") && strings.Count(r.URL.Path, "/") == 4:
		name := strings.TrimPrefix(r.URL.Path, "/api/v1/namespaces/")
		if !slices.Contains(s.namespaces, name) {
			writeStubStatus(w, http.StatusNotFound, "NotFound")
			return
		}
		writeStubJSON(w, http.StatusOK, stubNamespace(name))
	default:
		// Any other collection is empty unless given items: the list carries no kind, so that the
		// client takes the one of the type it decodes into.
		s.mu.Lock()
		items := s.lists[r.URL.Path]
		s.mu.Unlock()
		if items == nil {
			items = []any{}
		}
		writeStubJSON(w, http.StatusOK, map[string]any{"metadata": map[string]string{"resourceVersion": "1"}, "items": items})
	}
}

func (s *coreStub) tokenReview(w http.ResponseWriter, r *http.Request) {
	var review struct {
		APIVersion string `json:"apiVersion"`
		Spec       struct {
			Token string `json:"token"`
		} `json:"spec"`
	}
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil {
		writeStubStatus(w, http.StatusBadRequest, "BadRequest")
		return
	}
	status := map[string]any{"authenticated": false}
	if review.Spec.Token == s.token {
		status = map[string]any{"authenticated": true, "user": map[string]any{"username": stubUser, "groups": []string{"system:masters", "system:authenticated"}}}
	}
	writeStubJSON(w, http.StatusCreated, map[string]any{"apiVersion": review.APIVersion, "kind": "TokenReview", "status": status})
}

func (s *coreStub) accessReview(w http.ResponseWriter, r *http.Request) {
	var review struct {
		APIVersion string `json:"apiVersion"`
	}
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil {
		writeStubStatus(w, http.StatusBadRequest, "BadRequest")
		return
	}
	writeStubJSON(w, http.StatusCreated, map[string]any{"apiVersion": review.APIVersion, "kind": "SubjectAccessReview",
		"status": map[string]any{"allowed": true, "reason": "the benchmark's core API stub allows everything"}})
}

func stubNamespace(name string) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]string{"name": name, "uid": "bench-" + name, "resourceVersion": "1"},
		"status":   map[string]string{"phase": "Active"}}
}

func writeStubStatus(w http.ResponseWriter, code int, reason string) {
	writeStubJSON(w, code, map[string]any{"apiVersion": "v1", "kind": "Status", "status": "Failure", "reason": reason, "code": code})
}

func writeStubJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// stubKubeconfig is a kubeconfig for the stub at url, trusting the CA in caFile and presenting token.
func stubKubeconfig(url, caFile, token string) []byte {
	return fmt.Appendf(nil, `apiVersion: v1
kind: Config
clusters:
- name: core-stub
  cluster:
    server: %q
    certificate-authority: %q
users:
- name: bench
  user:
    token: %q
contexts:
- name: core-stub
  context:
    cluster: core-stub
    user: bench
current-context: core-stub
`, url, caFile, token)
}
