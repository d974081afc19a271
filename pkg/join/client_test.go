package join

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// joinServer serves a Handler over TLS with httptest's self-signed certificate, and returns it with
// the token that pins that certificate (the server's CA is its leaf itself).
func joinServer(t *testing.T, m Members) (*httptest.Server, Token) {
	t.Helper()
	h := newTestHandler(nil, m)
	srv := httptest.NewUnstartedServer(h)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	caPEM := certPEM(srv.Certificate())
	h.CA = func() ([]byte, error) { return caPEM, nil }
	hash, err := CAHash(caPEM)
	if err != nil {
		t.Fatal(err)
	}
	tok := Token{CAHash: hash, Secret: testSecret}
	h.Token = func() (Token, error) { return tok, nil }
	return srv, tok
}

var testRequest = Request{Name: "node-b", PeerURL: "https://10.0.0.2:2380"}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

func TestJoin(t *testing.T) {
	m := &fakeMembers{initial: "a=https://10.0.0.1:2380,node-b=https://10.0.0.2:2380"}
	srv, tok := joinServer(t, m)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	resp, err := Join(ctx, srv.URL, tok, testRequest, discard())
	if err != nil {
		t.Fatal(err)
	}
	want := &Response{InitialCluster: m.initial, Files: testFiles}
	if !reflect.DeepEqual(resp, want) {
		t.Errorf("Join = %+v, want %+v", resp, want)
	}
	if calls := m.Calls(); len(calls) != 1 || calls[0] != testRequest {
		t.Errorf("AddLearner calls %v, want one with %+v", calls, testRequest)
	}
	// A trailing slash on --join is accepted.
	if _, err := Join(ctx, srv.URL+"/", tok, testRequest, discard()); err != nil {
		t.Errorf("Join with a trailing slash: %v", err)
	}
}

// The refusals below must end Join at once: a short deadline that ends it instead means it retried.
func TestJoinRefusedAtOnce(t *testing.T) {
	other := newTestCA(t)
	otherHash, err := CAHash(other.pem)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		modify func(tok *Token)
		want   string
	}{
		{name: "other CA", modify: func(tok *Token) { tok.CAHash = otherHash }, want: "is not the one the join token names"},
		{name: "wrong secret", modify: func(tok *Token) { tok.Secret = "the-wrong-secret-0123456789" }, want: "refused the join token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &fakeMembers{initial: "a=https://10.0.0.1:2380"}
			srv, tok := joinServer(t, m)
			tt.modify(&tok)
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			resp, err := Join(ctx, srv.URL, tok, testRequest, discard())
			if err == nil {
				t.Fatalf("Join = %+v, want an error", resp)
			}
			if errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Join retried until the deadline: %v", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Join: %q, want it to say %q", err, tt.want)
			}
			if strings.Contains(err.Error(), tok.Secret) {
				t.Errorf("the error holds the secret: %q", err)
			}
			if calls := m.Calls(); len(calls) != 0 {
				t.Errorf("AddLearner called: %v", calls)
			}
		})
	}
}

func TestJoinBadRequestNotRetried(t *testing.T) {
	m := &fakeMembers{initial: "a=https://10.0.0.1:2380"}
	srv, tok := joinServer(t, m)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	_, err := Join(ctx, srv.URL, tok, Request{Name: "a,b", PeerURL: "https://10.0.0.2:2380"}, discard())
	if err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Join: %v, want a refusal at once", err)
	}
	if !strings.Contains(err.Error(), "refused the join") || !strings.Contains(err.Error(), "member name") {
		t.Errorf("Join: %q, want the member's reason", err)
	}
}

func TestJoinRetriesWhenBusy(t *testing.T) {
	m := &fakeMembers{initial: "a=https://10.0.0.1:2380,node-b=https://10.0.0.2:2380", errs: []error{ErrBusy}}
	srv, tok := joinServer(t, m)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	resp, err := Join(ctx, srv.URL, tok, testRequest, discard())
	if err != nil {
		t.Fatal(err)
	}
	if resp.InitialCluster != m.initial {
		t.Errorf("InitialCluster %q, want %q", resp.InitialCluster, m.initial)
	}
	if calls := m.Calls(); len(calls) != 2 {
		t.Errorf("AddLearner called %d times, want 2 (busy, then added)", len(calls))
	}
}

// A member that stays busy is retried until the context ends, and the error says why.
func TestJoinBusyUntilContextEnds(t *testing.T) {
	m := &fakeMembers{errs: []error{ErrBusy, ErrBusy, ErrBusy}}
	srv, tok := joinServer(t, m)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	// Join logs a retry after the busy answer, before it waits: end the context there.
	_, err := Join(ctx, srv.URL, tok, testRequest, onRetry(cancel))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Join: %v, want context.Canceled", err)
	}
	if !strings.Contains(err.Error(), "another member is joining") {
		t.Errorf("Join: %q, want the last answer in it", err)
	}
	if calls := m.Calls(); len(calls) != 1 {
		t.Errorf("AddLearner called %d times, want 1", len(calls))
	}
}

// onRetry is a logger that calls fn when Join logs that it retries.
func onRetry(fn func()) *slog.Logger { return slog.New(retryHandler{fn}) }

type retryHandler struct{ fn func() }

func (retryHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h retryHandler) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, "retrying") {
		h.fn()
	}
	return nil
}
func (h retryHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h retryHandler) WithGroup(string) slog.Handler      { return h }

// The CA is fetched without verification but the join itself trusts that CA only: a server whose
// certificate the CA did not sign never gets the secret, even when it serves the pinned CA.
func TestJoinPinsTheCA(t *testing.T) {
	ca := newTestCA(t)
	hash, err := CAHash(ca.pem)
	if err != nil {
		t.Fatal(err)
	}
	tok := Token{CAHash: hash, Secret: testSecret}

	t.Run("leaf of the CA, for another name", func(t *testing.T) {
		// The certificate names member.example, not 127.0.0.1: the pin, not the name, identifies it.
		m := &fakeMembers{initial: "a=https://10.0.0.1:2380"}
		srv := httptest.NewUnstartedServer(newTestHandler(ca.pem, m))
		srv.TLS = &tls.Config{Certificates: []tls.Certificate{ca.servingPair(t, "member.example")}}
		srv.StartTLS()
		t.Cleanup(srv.Close)
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		if _, err := Join(ctx, srv.URL, tok, testRequest, discard()); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("impostor serving the pinned CA", func(t *testing.T) {
		var mu sync.Mutex
		var authorized []string
		m := &fakeMembers{initial: "a=https://10.0.0.1:2380"}
		h := newTestHandler(ca.pem, m)
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if a := r.Header.Get("Authorization"); a != "" {
				mu.Lock()
				authorized = append(authorized, a)
				mu.Unlock()
			}
			h.ServeHTTP(w, r)
		}))
		srv.TLS = &tls.Config{Certificates: []tls.Certificate{newTestCA(t).servingPair(t, "member.example")}}
		srv.StartTLS()
		t.Cleanup(srv.Close)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		// A failed handshake is retried; one attempt is enough to see it fail.
		_, err := Join(ctx, srv.URL, tok, testRequest, onRetry(cancel))
		if err == nil {
			t.Fatal("Join succeeded against a server the pinned CA did not sign")
		}
		if !strings.Contains(err.Error(), "asking to join") || !strings.Contains(err.Error(), "certificate") {
			t.Errorf("Join: %q, want the join request to fail on the certificate", err)
		}
		srv.Close()
		mu.Lock()
		defer mu.Unlock()
		if len(authorized) != 0 {
			t.Errorf("the impostor received the secret: %v", authorized)
		}
		if calls := m.Calls(); len(calls) != 0 {
			t.Errorf("AddLearner called: %v", calls)
		}
	})
}

func TestCheckURL(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{in: "https://h:1", want: "https://h:1"},
		{in: "https://10.0.0.1:6443/", want: "https://10.0.0.1:6443"},
		{in: "https://[::1]:6443", want: "https://[::1]:6443"},
		{in: "http://h:1"},
		{in: "h:1"},
		{in: "https://"},
		{in: "https:///x"},
		{in: "https://h:1/apis"},
		{in: "https://h:1?x=1"},
		{in: "https://h:1/?x=1"},
		{in: ""},
		{in: "://h"},
		{in: "https://:6443"},
		{in: "https://10.0.0.1"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := CheckURL(tt.in)
			if tt.want == "" {
				if err == nil {
					t.Fatalf("CheckURL(%q) = %q, want an error", tt.in, got)
				}
				if !strings.Contains(err.Error(), "--join") || !strings.Contains(err.Error(), "https://HOST:PORT") {
					t.Errorf("CheckURL(%q): %q, want it to name --join and the form", tt.in, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("CheckURL(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestJoinRefusesBadURL(t *testing.T) {
	_, err := Join(t.Context(), "http://h:1", Token{}, testRequest, discard())
	if err == nil || !strings.Contains(err.Error(), "--join") {
		t.Errorf("Join with an http URL: %v, want the --join error", err)
	}
}
