package apiserver

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"testing"
	"time"
)

// TestLoopbackStreams pins what informers need from the loopback: the response comes back once the
// handler has written its header, its body streams as it is written, and closing the body ends the
// handler's request.
func TestLoopbackStreams(t *testing.T) {
	ended := make(chan struct{})
	next := make(chan struct{})
	lb := &loopback{handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(ended)
		if _, ok := w.(http.Flusher); !ok {
			t.Error("the loopback's writer is no http.Flusher: watches would not flush")
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, "first\n")
		<-next
		io.WriteString(w, "second\n")
		<-r.Context().Done()
	})}
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://loopback/api/v1/configmaps?watch=1", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := lb.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusAccepted || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("got %d %v, want 202 with the handler's header", resp.StatusCode, resp.Header)
	}
	lines := bufio.NewReader(resp.Body)
	for i, want := range []string{"first\n", "second\n"} {
		if i == 1 {
			close(next)
		}
		got, err := lines.ReadString('\n')
		if err != nil || got != want {
			t.Fatalf("line %d: got %q, %v; want %q", i, got, err, want)
		}
	}
	resp.Body.Close()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("closing the body did not end the handler's request")
	}
}

// TestLoopbackCancelledBeforeHeader pins that a request cancelled before the handler answers
// returns the context's error and does not leave the handler running.
func TestLoopbackCancelledBeforeHeader(t *testing.T) {
	ended := make(chan struct{})
	lb := &loopback{handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(ended)
		<-r.Context().Done()
	})}
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://loopback/api/v1/configmaps", nil)
	if err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(50*time.Millisecond, cancel)
	if _, err := lb.RoundTrip(req); err == nil {
		t.Fatal("a cancelled request returned no error")
	}
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the handler still runs after its request was cancelled")
	}
}

// TestLoopbackBoundEndsRequests pins that a bound loopback ends a request its client never cancels
// (context.TODO) when the bound context ends, so a shutdown does not wait on it.
func TestLoopbackBoundEndsRequests(t *testing.T) {
	ended := make(chan struct{})
	lb := &loopback{handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(ended)
		<-r.Context().Done() // etcd does not answer
		w.WriteHeader(http.StatusServiceUnavailable)
	})}
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(context.TODO(), http.MethodGet, "http://loopback/api/v1/namespaces/kube-system", nil)
	if err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(50*time.Millisecond, cancel)
	answered := make(chan *http.Response, 1)
	go func() {
		resp, err := lb.boundTo(ctx).RoundTrip(req)
		if err != nil {
			t.Error(err)
		}
		answered <- resp
	}()
	select {
	case resp := <-answered:
		if resp != nil && resp.StatusCode != http.StatusServiceUnavailable {
			t.Errorf("got %d, want the handler's 503", resp.StatusCode)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the request outlived the context its loopback is bound to")
	}
	<-ended
}
