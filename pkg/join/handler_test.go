package join

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// fakeMembers records AddLearner calls and answers them with errs in turn, then with initial.
type fakeMembers struct {
	initial string

	mu    sync.Mutex
	errs  []error
	calls []Request
}

var _ Members = (*fakeMembers)(nil)

func (m *fakeMembers) AddLearner(_ context.Context, name, peerURL string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls = append(m.calls, Request{Name: name, PeerURL: peerURL})
	if len(m.errs) > 0 {
		err := m.errs[0]
		m.errs = m.errs[1:]
		if err != nil {
			return "", err
		}
	}
	return m.initial, nil
}

func (m *fakeMembers) Calls() []Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Request(nil), m.calls...)
}

const testSecret = "the-right-secret-0123456789"

// testFiles is what the fake member hands joiners.
var testFiles = map[string][]byte{"ca.crt": []byte("CA CERT"), "ca.key": []byte("CA KEY"), "sa.pub": []byte("SA PUB")}

// newTestHandler is a Handler whose token pins caPEM and holds testSecret.
func newTestHandler(caPEM []byte, m Members) *Handler {
	return &Handler{
		Token: func() (Token, error) {
			hash, err := CAHash(caPEM)
			return Token{CAHash: hash, Secret: testSecret}, err
		},
		CA:      func() ([]byte, error) { return caPEM, nil },
		Files:   func() (map[string][]byte, error) { return testFiles, nil },
		Members: m,
		Logger:  slog.New(slog.DiscardHandler),
	}
}

func TestHandler(t *testing.T) {
	ca := newTestCA(t)
	good := `{"name":"node-b","peerURL":"https://10.0.0.2:2380"}`
	huge := `{"name":"` + strings.Repeat("a", 65<<10) + `","peerURL":"https://10.0.0.2:2380"}`
	bearer := "Bearer " + testSecret

	tests := []struct {
		name         string
		method, path string
		auth, body   string
		memberErrs   []error
		tokenErr     error
		filesErr     error

		wantCode       int
		wantReason     metav1.StatusReason // "" when the answer is not a Status
		wantMessage    string              // substring of the Status message
		wantCalls      int
		wantRetryAfter string
	}{
		{name: "GET ca", method: http.MethodGet, path: PathCA, wantCode: http.StatusOK},
		{name: "POST ca", method: http.MethodPost, path: PathCA, auth: bearer, body: good,
			wantCode: http.StatusMethodNotAllowed, wantReason: metav1.StatusReasonMethodNotAllowed, wantMessage: "GET only"},
		{name: "GET join", method: http.MethodGet, path: PathJoin, auth: bearer,
			wantCode: http.StatusMethodNotAllowed, wantReason: metav1.StatusReasonMethodNotAllowed, wantMessage: "POST only"},
		{name: "unknown path", method: http.MethodGet, path: PathPrefix + "members",
			wantCode: http.StatusNotFound, wantReason: metav1.StatusReasonNotFound},
		{name: "prefix itself", method: http.MethodGet, path: PathPrefix,
			wantCode: http.StatusNotFound, wantReason: metav1.StatusReasonNotFound},
		{name: "join with a trailing slash", method: http.MethodPost, path: PathJoin + "/", auth: bearer, body: good,
			wantCode: http.StatusNotFound, wantReason: metav1.StatusReasonNotFound},
		{name: "no authorization", method: http.MethodPost, path: PathJoin, body: good,
			wantCode: http.StatusUnauthorized, wantReason: metav1.StatusReasonUnauthorized, wantMessage: "--join-token"},
		{name: "basic authorization", method: http.MethodPost, path: PathJoin, auth: "Basic " + testSecret, body: good,
			wantCode: http.StatusUnauthorized, wantReason: metav1.StatusReasonUnauthorized},
		{name: "empty bearer", method: http.MethodPost, path: PathJoin, auth: "Bearer ", body: good,
			wantCode: http.StatusUnauthorized, wantReason: metav1.StatusReasonUnauthorized},
		{name: "wrong secret", method: http.MethodPost, path: PathJoin, auth: "Bearer the-wrong-secret-0123456789", body: good,
			wantCode: http.StatusUnauthorized, wantReason: metav1.StatusReasonUnauthorized, wantMessage: "not this cluster's"},
		{name: "whole token as bearer", method: http.MethodPost, path: PathJoin, auth: "Bearer apictl1.x." + testSecret, body: good,
			wantCode: http.StatusUnauthorized, wantReason: metav1.StatusReasonUnauthorized},
		{name: "bad JSON", method: http.MethodPost, path: PathJoin, auth: bearer, body: `{"name":`,
			wantCode: http.StatusBadRequest, wantReason: metav1.StatusReasonBadRequest, wantMessage: "not valid JSON"},
		{name: "empty body", method: http.MethodPost, path: PathJoin, auth: bearer,
			wantCode: http.StatusBadRequest, wantReason: metav1.StatusReasonBadRequest, wantMessage: "not valid JSON"},
		{name: "unknown field", method: http.MethodPost, path: PathJoin, auth: bearer, body: `{"name":"b","peerURL":"https://10.0.0.2:2380","role":"voter"}`,
			wantCode: http.StatusBadRequest, wantReason: metav1.StatusReasonBadRequest, wantMessage: "role"},
		{name: "empty name", method: http.MethodPost, path: PathJoin, auth: bearer, body: `{"peerURL":"https://10.0.0.2:2380"}`,
			wantCode: http.StatusBadRequest, wantReason: metav1.StatusReasonBadRequest, wantMessage: "member name"},
		{name: "name with =", method: http.MethodPost, path: PathJoin, auth: bearer, body: `{"name":"a=https://evil:2380","peerURL":"https://10.0.0.2:2380"}`,
			wantCode: http.StatusBadRequest, wantReason: metav1.StatusReasonBadRequest, wantMessage: "member name"},
		{name: "name with ,", method: http.MethodPost, path: PathJoin, auth: bearer, body: `{"name":"a,b","peerURL":"https://10.0.0.2:2380"}`,
			wantCode: http.StatusBadRequest, wantReason: metav1.StatusReasonBadRequest, wantMessage: "member name"},
		{name: "name with a space", method: http.MethodPost, path: PathJoin, auth: bearer, body: `{"name":"a b","peerURL":"https://10.0.0.2:2380"}`,
			wantCode: http.StatusBadRequest, wantReason: metav1.StatusReasonBadRequest, wantMessage: "member name"},
		{name: "http peer URL", method: http.MethodPost, path: PathJoin, auth: bearer, body: `{"name":"b","peerURL":"http://10.0.0.2:2380"}`,
			wantCode: http.StatusBadRequest, wantReason: metav1.StatusReasonBadRequest, wantMessage: "peer URL"},
		{name: "peer URL without port", method: http.MethodPost, path: PathJoin, auth: bearer, body: `{"name":"b","peerURL":"https://10.0.0.2"}`,
			wantCode: http.StatusBadRequest, wantReason: metav1.StatusReasonBadRequest, wantMessage: "peer URL"},
		{name: "peer URL with a path", method: http.MethodPost, path: PathJoin, auth: bearer, body: `{"name":"b","peerURL":"https://10.0.0.2:2380/x"}`,
			wantCode: http.StatusBadRequest, wantReason: metav1.StatusReasonBadRequest, wantMessage: "peer URL"},
		{name: "empty peer URL", method: http.MethodPost, path: PathJoin, auth: bearer, body: `{"name":"b"}`,
			wantCode: http.StatusBadRequest, wantReason: metav1.StatusReasonBadRequest, wantMessage: "peer URL"},
		{name: "body over 64 KiB", method: http.MethodPost, path: PathJoin, auth: bearer, body: huge,
			wantCode: http.StatusBadRequest, wantReason: metav1.StatusReasonBadRequest, wantMessage: "too large"},
		{name: "joined", method: http.MethodPost, path: PathJoin, auth: bearer, body: good,
			wantCode: http.StatusOK, wantCalls: 1},
		{name: "secret with surrounding space", method: http.MethodPost, path: PathJoin, auth: bearer + " ", body: good,
			wantCode: http.StatusOK, wantCalls: 1},
		{name: "busy", method: http.MethodPost, path: PathJoin, auth: bearer, body: good, memberErrs: []error{ErrBusy},
			wantCode: http.StatusServiceUnavailable, wantReason: metav1.StatusReasonServiceUnavailable, wantMessage: "retry", wantCalls: 1, wantRetryAfter: "1"},
		{name: "busy wrapped", method: http.MethodPost, path: PathJoin, auth: bearer, body: good, memberErrs: []error{errors.Join(errors.New("learner not caught up"), ErrBusy)},
			wantCode: http.StatusServiceUnavailable, wantReason: metav1.StatusReasonServiceUnavailable, wantCalls: 1, wantRetryAfter: "1"},
		{name: "member error", method: http.MethodPost, path: PathJoin, auth: bearer, body: good, memberErrs: []error{errors.New("etcdserver: too many learner members")},
			wantCode: http.StatusServiceUnavailable, wantReason: metav1.StatusReasonServiceUnavailable, wantMessage: "etcdserver: too many learner members", wantCalls: 1},
		{name: "token unreadable", method: http.MethodPost, path: PathJoin, auth: bearer, body: good, tokenErr: errors.New("disk on fire"),
			wantCode: http.StatusInternalServerError, wantReason: metav1.StatusReasonInternalError, wantMessage: "join token"},
		{name: "files unreadable", method: http.MethodPost, path: PathJoin, auth: bearer, body: good, filesErr: errors.New("disk on fire"),
			wantCode: http.StatusInternalServerError, wantReason: metav1.StatusReasonInternalError, wantMessage: "CAs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &fakeMembers{initial: "a=https://10.0.0.1:2380,node-b=https://10.0.0.2:2380", errs: tt.memberErrs}
			h := newTestHandler(ca.pem, m)
			if tt.tokenErr != nil {
				h.Token = func() (Token, error) { return Token{}, tt.tokenErr }
			}
			if tt.filesErr != nil {
				h.Files = func() (map[string][]byte, error) { return nil, tt.filesErr }
			}
			srv := httptest.NewServer(h)
			t.Cleanup(srv.Close)

			req, err := http.NewRequest(tt.method, srv.URL+tt.path, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if tt.auth != "" {
				req.Header.Set("Authorization", tt.auth)
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.wantCode {
				t.Errorf("code %d, want %d; body %s", resp.StatusCode, tt.wantCode, body)
			}
			if got := resp.Header.Get("Retry-After"); got != tt.wantRetryAfter {
				t.Errorf("Retry-After %q, want %q", got, tt.wantRetryAfter)
			}
			if calls := m.Calls(); len(calls) != tt.wantCalls {
				t.Errorf("AddLearner called %d times (%v), want %d", len(calls), calls, tt.wantCalls)
			} else if tt.wantCalls > 0 && calls[0] != (Request{Name: "node-b", PeerURL: "https://10.0.0.2:2380"}) {
				t.Errorf("AddLearner(%+v), want node-b and its peer URL", calls[0])
			}

			switch {
			case tt.wantReason != "":
				var st metav1.Status
				if err := json.Unmarshal(body, &st); err != nil {
					t.Fatalf("answer is not a Status: %v: %s", err, body)
				}
				if st.Kind != "Status" || st.APIVersion != "v1" || st.Status != metav1.StatusFailure ||
					st.Code != int32(tt.wantCode) || st.Reason != tt.wantReason {
					t.Errorf("Status %+v, want kind Status, code %d, reason %s", st, tt.wantCode, tt.wantReason)
				}
				if !strings.Contains(st.Message, tt.wantMessage) {
					t.Errorf("message %q, want it to contain %q", st.Message, tt.wantMessage)
				}
				if strings.Contains(string(body), testSecret) {
					t.Errorf("the answer holds the secret: %s", body)
				}
				if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type %q", ct)
				}
			case tt.path == PathCA:
				if !bytes.Equal(body, ca.pem) {
					t.Errorf("GET ca = %q, want the CA PEM", body)
				}
				if ct := resp.Header.Get("Content-Type"); ct != "application/x-pem-file" {
					t.Errorf("Content-Type %q", ct)
				}
			default:
				var got Response
				dec := json.NewDecoder(bytes.NewReader(body))
				dec.DisallowUnknownFields()
				if err := dec.Decode(&got); err != nil {
					t.Fatalf("answer is not a Response: %v: %s", err, body)
				}
				want := Response{InitialCluster: m.initial, Files: testFiles}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("Response %+v, want %+v", got, want)
				}
			}
		})
	}
}

func TestHandlerCAUnreadable(t *testing.T) {
	h := newTestHandler(nil, &fakeMembers{})
	h.CA = func() ([]byte, error) { return nil, errors.New("gone") }
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, PathCA, nil))
	if rec.Code != http.StatusInternalServerError {
		t.Errorf("code %d, want 500", rec.Code)
	}
	var st metav1.Status
	if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil || st.Reason != metav1.StatusReasonInternalError {
		t.Errorf("answer %s, %v; want an InternalError Status", rec.Body, err)
	}
}
