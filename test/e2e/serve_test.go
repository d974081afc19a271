package e2e

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func get(c *http.Client, url string) (int, string, error) {
	resp, err := c.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// getTraced is get, also reporting whether the request went out on a connection used before.
func getTraced(c *http.Client, url string) (code int, reused bool, err error) {
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		return 0, false, err
	}
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused },
	}))
	resp, err := c.Do(req)
	if err != nil {
		return 0, reused, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, reused, err
}

// notAccepted reports whether a failed request never reached the server: the connection was refused
// because the listener had closed, or it was a new connection still in the kernel's accept queue when
// the listener closed, which the kernel then resets. Neither was accepted by the server; closing a
// listener always drops the accept queue, which is why load balancers get --shutdown-delay-duration
// to stop sending traffic first.
func notAccepted(err error, reused bool) bool {
	if errors.Is(err, syscall.ECONNREFUSED) {
		return true
	}
	return !reused && (errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET))
}

func TestShutdownUnderLoad(t *testing.T) {
	ports := freePorts(t, 2)
	base := fmt.Sprintf("http://127.0.0.1:%d", ports[1])
	p := startServe(t, "--secure-port", fmt.Sprint(ports[0]), "--insecure-port", fmt.Sprint(ports[1]),
		"--shutdown-delay-duration", "2s")
	c := &http.Client{Timeout: 10 * time.Second}
	waitReady(t, ports[1])

	// A steady stream from four clients, bounded in time: 6 seconds at most.
	var ok, failed, dropped atomic.Int64
	var failures sync.Map
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := &http.Client{Timeout: 10 * time.Second}
			for deadline := time.Now().Add(6 * time.Second); time.Now().Before(deadline); {
				select {
				case <-stop:
					return
				default:
				}
				code, reused, err := getTraced(client, base+"/version")
				switch {
				case err == nil && code == 200:
					ok.Add(1)
				case err != nil && notAccepted(err, reused):
					dropped.Add(1)
					time.Sleep(10 * time.Millisecond)
				default:
					failed.Add(1)
					failures.Store(fmt.Sprintf("client %d: %d %v", i, code, err), true)
				}
			}
		}()
	}

	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	waitFor(t, time.Second, "readyz failing", func() bool {
		code, body, _ := get(c, base+"/readyz")
		return code == 500 && strings.Contains(body, "[-]shutdown failed: reason withheld")
	})
	if code, _, err := get(c, base+"/healthz"); code != 200 {
		t.Errorf("/healthz during the delay: %d %v", code, err)
	}
	// A request that is in flight when the listener closes completes: a one-second CPU profile,
	// started half a second before the delay ends.
	time.Sleep(time.Until(sent.Add(1500 * time.Millisecond)))
	profile := make(chan string, 1)
	go func() {
		code, body, err := get(c, base+"/debug/pprof/profile?seconds=1")
		profile <- fmt.Sprintf("%d %d bytes %v", code, len(body), err)
	}()
	if code := p.wait(t, 15*time.Second); code != 0 {
		t.Errorf("exit code %d, want 0\n%s", code, p.output)
	}
	close(stop)
	wg.Wait()
	if got := <-profile; !strings.HasPrefix(got, "200 ") || !strings.HasSuffix(got, "<nil>") {
		t.Errorf("the in-flight request got %s", got)
	}
	if failed.Load() != 0 {
		var all []string
		failures.Range(func(k, _ any) bool { all = append(all, k.(string)); return true })
		t.Errorf("%d accepted requests failed: %v", failed.Load(), all)
	}
	if ok.Load() == 0 || dropped.Load() == 0 {
		t.Errorf("the stream did not span the shutdown: %d ok, %d not accepted", ok.Load(), dropped.Load())
	}
	t.Logf("%d requests succeeded, %d were not accepted once the listener closed, %d failed", ok.Load(), dropped.Load(), failed.Load())
	for _, step := range []string{"shutdown initiated", "closing listeners", "drained", "shutdown complete"} {
		if !p.output.contains(step) {
			t.Errorf("no log line for %q", step)
		}
	}
}

func TestSecondSignalExitsAtOnce(t *testing.T) {
	ports := freePorts(t, 2)
	p := startServe(t, "--secure-port", fmt.Sprint(ports[0]), "--insecure-port", fmt.Sprint(ports[1]),
		"--shutdown-delay-duration", "30s")
	waitReady(t, ports[1])
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	waitFor(t, 5*time.Second, "shutdown to begin", func() bool { return p.output.contains("shutdown initiated") })
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.wait(t, 2*time.Second); code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	if !p.output.contains("a second signal: exiting at once") {
		t.Errorf("the second signal left no log line:\n%s", p.output)
	}
}

func TestPortInUse(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	port := taken.Addr().(*net.TCPAddr).Port
	start := time.Now()
	p := startServe(t, "--secure-port", "0", "--insecure-port", fmt.Sprint(port))
	if code := p.wait(t, 5*time.Second); code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	if took := time.Since(start); took > time.Second {
		t.Logf("took %s to fail (the issue asks for less than a second)", took)
	}
	want := fmt.Sprintf("--insecure-port %d on 127.0.0.1 is in use by another process: choose another with --insecure-port, or 0 to turn it off", port)
	if !p.output.contains(want) {
		t.Errorf("output lacks %q:\n%s", want, p.output)
	}
}

// TestShutdownKeepAlivePOSTs is issue 14's shutdown must-show: keep-alive clients that POST through a
// graceful shutdown never get an EOF on a connection they reused, in 10 runs. During the shutdown
// delay every response asks the client to reconnect, so no connection is left idle for the drain to
// close under a request; what fails is only new connections the closed listener refuses, which every
// client retries.
func TestShutdownKeepAlivePOSTs(t *testing.T) {
	runs := 10
	if testing.Short() {
		runs = 2
	}
	var ok, dropped int64
	for run := range runs {
		o, d, failures := postThroughShutdown(t)
		ok, dropped = ok+o, dropped+d
		if len(failures) > 0 {
			t.Fatalf("run %d: %d POSTs failed on reused connections: %v", run+1, len(failures), failures)
		}
	}
	t.Logf("%d runs: %d POSTs succeeded, %d were not accepted once the listener closed, none failed", runs, ok, dropped)
}

// postThroughShutdown runs eight keep-alive POST clients against a server, stops the server gracefully
// under them, and returns what the clients saw.
func postThroughShutdown(t *testing.T) (ok, dropped int64, failures []string) {
	t.Helper()
	ports := freePorts(t, 2)
	base := fmt.Sprintf("http://127.0.0.1:%d", ports[1])
	p := startServe(t, "--secure-port", fmt.Sprint(ports[0]), "--insecure-port", fmt.Sprint(ports[1]),
		"--shutdown-delay-duration", "1s")
	waitReady(t, ports[1])
	var okN, droppedN atomic.Int64
	var mu sync.Mutex
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			client := &http.Client{Timeout: 10 * time.Second}
			defer client.CloseIdleConnections()
			body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"generateName":"shutdown-"},"data":{"a":"1"}}`
			for deadline := time.Now().Add(8 * time.Second); time.Now().Before(deadline); {
				select {
				case <-stop:
					return
				default:
				}
				code, reused, err := postTraced(client, base+"/api/v1/namespaces/default/configmaps", body)
				switch {
				case err == nil && code == http.StatusCreated:
					okN.Add(1)
				case err != nil && notAccepted(err, reused):
					droppedN.Add(1)
					time.Sleep(10 * time.Millisecond)
				default:
					mu.Lock()
					failures = append(failures, fmt.Sprintf("client %d: %d reused=%v %v", i, code, reused, err))
					mu.Unlock()
				}
			}
		})
	}
	time.Sleep(300 * time.Millisecond)
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t, 15*time.Second); code != 0 {
		t.Errorf("exit code %d, want 0\n%s", code, p.output)
	}
	close(stop)
	wg.Wait()
	if okN.Load() == 0 || droppedN.Load() == 0 {
		t.Errorf("the stream did not span the shutdown: %d ok, %d not accepted", okN.Load(), droppedN.Load())
	}
	return okN.Load(), droppedN.Load(), failures
}

// postTraced POSTs body, also reporting whether the request went out on a connection used before.
func postTraced(c *http.Client, url, body string) (code int, reused bool, err error) {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return 0, false, err
	}
	req.Header.Set("Content-Type", "application/json")
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused },
	}))
	resp, err := c.Do(req)
	if err != nil {
		return 0, reused, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, reused, err
}
