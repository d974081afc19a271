// Package e2e runs the apictl binary as users do: a real process, real signals, real clients.
package e2e

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apictl/apictl/cmd/apictl/app"
)

// binary is the apictl built once for the whole package.
var binary string

// The tests run a binary built from source, which go test's cache cannot see; depending on the command
// package makes the cache key change whenever apictl's code does.
var _ = app.Main

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "apictl-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "apictl")
	build := exec.Command("go", "build", "-o", binary, "github.com/apictl/apictl/cmd/apictl")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building apictl:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// process is a running `apictl serve`.
type process struct {
	cmd    *exec.Cmd
	output *syncBuffer
	dir    string
	done   chan error
}

// startServe runs apictl serve in a fresh directory with the given flags.
func startServe(t *testing.T, args ...string) *process {
	t.Helper()
	return startServeIn(t, t.TempDir(), args...)
}

// startServeIn runs apictl serve in dir, so that a second process finds the first one's data.
func startServeIn(t *testing.T, dir string, args ...string) *process {
	t.Helper()
	p := &process{output: &syncBuffer{}, dir: dir, done: make(chan error, 1)}
	p.cmd = exec.Command(binary, append([]string{"serve"}, args...)...)
	p.cmd.Dir = dir
	p.cmd.Env = append(os.Environ(), "NOTIFY_SOCKET=")
	p.cmd.Stdout, p.cmd.Stderr = p.output, p.output
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// wait returns the exit code, failing the test if the process does not exit within d.
func (p *process) wait(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(d):
		t.Fatalf("apictl serve did not exit within %s\noutput:\n%s", d, p.output)
		return -1
	}
}

// freePorts returns n ports that were free a moment ago.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	var lns []net.Listener
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	for _, ln := range lns {
		ln.Close()
	}
	return ports
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (s *syncBuffer) contains(sub string) bool { return strings.Contains(s.String(), sub) }

// waitFor polls cond until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
