package serve

import (
	"bufio"
	"crypto/tls"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/apictl/apictl/pkg/serve/request"
)

func TestGracefulShutdown(t *testing.T) {
	const delay = time.Second
	ts := startTestServer(t, func(c *Config) { c.ShutdownDelayDuration = delay }, fakeResources{
		// A watch: one event, then it waits for the server to stop accepting and ends its stream.
		"": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"type":"ADDED"}`+"\n")
			w.(http.Flusher).Flush()
			select {
			case <-request.LongRunningDone(r.Context()):
			case <-r.Context().Done():
			}
		},
		"slow": func(w http.ResponseWriter, _ *http.Request) {
			time.Sleep(1500 * time.Millisecond)
			_, _ = io.WriteString(w, "done")
		},
	}, nil)
	c := http.Client{Timeout: 10 * time.Second}

	watch, err := c.Get(ts.insecureURL + "/api/v1/namespaces/default/configmaps?watch=true")
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Body.Close()
	events := bufio.NewReader(watch.Body)
	if line, err := events.ReadString('\n'); err != nil || !strings.Contains(line, "ADDED") {
		t.Fatalf("first watch event: %q %v", line, err)
	}

	start := time.Now()
	ts.cancel() // the first SIGTERM
	waitFor(t, func() bool {
		code, body := get(ts.insecureURL + "/readyz")
		return code == 500 && strings.Contains(body, "[-]shutdown failed: reason withheld")
	})
	// Everything else is still served during the delay, and a request that is in flight when the
	// listeners close completes.
	slow := make(chan string, 1)
	go func() {
		code, body := get(ts.insecureURL + objectURL("slow"))
		slow <- strings.TrimSpace(strings.Join([]string{http.StatusText(code), body}, " "))
	}()
	for time.Since(start) < delay-200*time.Millisecond {
		if code, _ := get(ts.insecureURL + "/healthz"); code != 200 {
			t.Fatalf("/healthz during the shutdown delay = %d", code)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := <-slow; got != "OK done" {
		t.Errorf("in-flight request got %q", got)
	}
	// The watch stream ends cleanly: EOF, not a reset.
	if rest, err := io.ReadAll(events); err != nil || len(rest) != 0 {
		t.Errorf("watch stream ended with %q, %v", rest, err)
	}
	if err := <-ts.done; err != nil {
		t.Errorf("Run returned %v", err)
	}
	ts.done <- nil // for the cleanup
	if _, err := http.Get(ts.insecureURL + "/healthz"); err == nil {
		t.Errorf("the listener still accepts after shutdown")
	}
	for _, step := range []string{"shutdown initiated", "closing listeners", "drained", "shutdown complete"} {
		if !strings.Contains(ts.logs.String(), step) {
			t.Errorf("no log line for %q", step)
		}
	}
}

func TestServingCertificateReload(t *testing.T) {
	ts := startTestServer(t, func(c *Config) { c.SecureServing.ReloadInterval = 50 * time.Millisecond }, nil, nil)
	serial := func() int64 {
		conn, err := tls.Dial("tcp", strings.TrimPrefix(ts.secureURL, "https://"), &tls.Config{RootCAs: ts.pki.roots()})
		if err != nil {
			return -1
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0].SerialNumber.Int64()
	}
	if got := serial(); got != 2 {
		t.Fatalf("initial serial = %d, want 2", got)
	}
	ts.pki.writeServing(t, 3)
	waitFor(t, func() bool { return serial() == 3 })
	waitFor(t, func() bool { return strings.Contains(ts.logs.String(), "reloaded the serving certificate from disk") })
}
