package join

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Paths of the endpoint a member serves on its secure port, ahead of authentication: a joiner has
// no API credentials, only the join token.
const (
	PathPrefix = "/apictl/v1/cluster/"
	// PathCA answers the serving CA, which the joiner checks against its token's hash.
	PathCA = PathPrefix + "ca"
	// PathJoin adds the caller as a learner and answers what it needs to start its member.
	PathJoin = PathPrefix + "join"
)

// Request is what a joiner sends: its member's name and peer URL.
type Request struct {
	Name    string `json:"name"`
	PeerURL string `json:"peerURL"`
}

// Response is what a member answers a joiner: the initial cluster its member starts with, and the
// cluster's shared CAs and keys, by path relative to the cert dir.
type Response struct {
	InitialCluster string            `json:"initialCluster"`
	Files          map[string][]byte `json:"files"`
}

// Members is the member's side of the etcd cluster.
type Members interface {
	// AddLearner adds a member and returns the initial cluster it must start with.
	AddLearner(ctx context.Context, name, peerURL string) (initialCluster string, err error)
}

// ErrBusy, from Members.AddLearner, asks the joiner to retry later.
var ErrBusy = errors.New("busy")

// Handler serves PathCA and PathJoin.
type Handler struct {
	// Token returns the member's join token; its secret is what joiners must present.
	Token func() (Token, error)
	// CA returns the PEM of the serving CA the token pins.
	CA func() ([]byte, error)
	// Files returns the cluster's shared files to hand to a joiner (see SharedFiles).
	Files   func() (map[string][]byte, error)
	Members Members
	// Logger receives refused and accepted joins; nil discards them.
	Logger *slog.Logger
	// Timeout bounds one join; zero means 30 s.
	Timeout time.Duration

	// mu serializes joins: etcd takes one learner at a time.
	mu sync.Mutex
}

// maxRequestBytes bounds a join request's body.
const maxRequestBytes = 64 << 10

// ServeHTTP answers the join endpoint's paths.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case PathCA:
		if r.Method != http.MethodGet {
			writeStatus(w, http.StatusMethodNotAllowed, metav1.StatusReasonMethodNotAllowed, "GET only")
			return
		}
		ca, err := h.CA()
		if err != nil {
			h.logger().Error("join: reading the serving CA", "err", err)
			writeStatus(w, http.StatusInternalServerError, metav1.StatusReasonInternalError, "the serving CA is not readable")
			return
		}
		w.Header().Set("Content-Type", "application/x-pem-file")
		_, _ = w.Write(ca)
	case PathJoin:
		if r.Method != http.MethodPost {
			writeStatus(w, http.StatusMethodNotAllowed, metav1.StatusReasonMethodNotAllowed, "POST only")
			return
		}
		h.join(w, r)
	default:
		writeStatus(w, http.StatusNotFound, metav1.StatusReasonNotFound, "the server could not find the requested resource")
	}
}

func (h *Handler) join(w http.ResponseWriter, r *http.Request) {
	log := h.logger().With("remote", r.RemoteAddr)
	token, err := h.Token()
	if err != nil {
		log.Error("join: reading this member's join token", "err", err)
		writeStatus(w, http.StatusInternalServerError, metav1.StatusReasonInternalError, "this member's join token is not readable")
		return
	}
	secret, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		log.Warn("join refused: no join token")
		writeStatus(w, http.StatusUnauthorized, metav1.StatusReasonUnauthorized, "a join needs the cluster's join token (--join-token)")
		return
	}
	if !token.MatchesSecret(strings.TrimSpace(secret)) {
		log.Warn("join refused: wrong join token")
		writeStatus(w, http.StatusUnauthorized, metav1.StatusReasonUnauthorized, "the join token is not this cluster's: copy it from the join-token file in a member's --data-dir")
		return
	}
	var req Request
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxRequestBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		writeStatus(w, http.StatusBadRequest, metav1.StatusReasonBadRequest, "the join request is not valid JSON: "+err.Error())
		return
	}
	if msg := req.check(); msg != "" {
		writeStatus(w, http.StatusBadRequest, metav1.StatusReasonBadRequest, msg)
		return
	}
	files, err := h.Files()
	if err != nil {
		log.Error("join: reading the cluster's shared files", "err", err)
		writeStatus(w, http.StatusInternalServerError, metav1.StatusReasonInternalError, "this member's CAs are not readable")
		return
	}
	timeout := h.Timeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	h.mu.Lock()
	initial, err := h.Members.AddLearner(ctx, req.Name, req.PeerURL)
	h.mu.Unlock()
	if errors.Is(err, ErrBusy) {
		w.Header().Set("Retry-After", "1")
		writeStatus(w, http.StatusServiceUnavailable, metav1.StatusReasonServiceUnavailable, "another member is joining the cluster; retry in a moment")
		return
	}
	if err != nil {
		log.Error("join: adding the member", "name", req.Name, "peerURL", req.PeerURL, "err", err)
		writeStatus(w, http.StatusServiceUnavailable, metav1.StatusReasonServiceUnavailable, "adding the member failed: "+err.Error())
		return
	}
	log.Info("member added to the embedded etcd cluster as a learner", "name", req.Name, "peerURL", req.PeerURL)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(Response{InitialCluster: initial, Files: files})
}

// check returns what is wrong with req, or "".
func (req Request) check() string {
	if req.Name == "" || strings.ContainsAny(req.Name, "=, \t\n") {
		return fmt.Sprintf("member name %q: want a name without '=', ',' or spaces", req.Name)
	}
	u, err := url.Parse(req.PeerURL)
	if err != nil || u.Scheme != "https" || u.Port() == "" || u.Path != "" {
		return fmt.Sprintf("peer URL %q: want https://IP:PORT", req.PeerURL)
	}
	return ""
}

// writeStatus answers a Kubernetes Status, as every error of the secure port is.
func writeStatus(w http.ResponseWriter, code int, reason metav1.StatusReason, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Message: message, Reason: reason, Code: int32(code),
	})
}

func (h *Handler) logger() *slog.Logger {
	if h.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return h.Logger
}
