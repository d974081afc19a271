package webhooktest

import (
	"bufio"
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Process is a test webhook program running for a test.
type Process struct {
	// URL is the line the program printed once it served: https://127.0.0.1:PORT[/path].
	URL string
	cmd *exec.Cmd

	mu     sync.Mutex
	stderr bytes.Buffer
}

// Start builds the Go program pkg (an import path), runs it with args and waits up to 30 s for the
// URL it prints; the test fails if it prints none or one not on https://127.0.0.1. The process is
// killed when the test ends.
func Start(t testing.TB, pkg string, args ...string) *Process {
	t.Helper()
	bin := filepath.Join(t.TempDir(), filepath.Base(pkg))
	if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v\n%s", pkg, err, out)
	}
	p := &Process{cmd: exec.Command(bin, args...)}
	p.cmd.Stderr = p
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	urls := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		urls <- strings.TrimSpace(line)
	}()
	select {
	case p.URL = <-urls:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s printed no URL within 30s: %s", pkg, p.Log())
	}
	if !strings.HasPrefix(p.URL, "https://127.0.0.1:") {
		t.Fatalf("%s printed the URL %q: %s", pkg, p.URL, p.Log())
	}
	return p
}

// Write collects the program's stderr.
func (p *Process) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.Write(b)
}

// Log is what the program wrote on stderr so far.
func (p *Process) Log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

// Stop kills the program, if it still runs, and waits for it.
func (p *Process) Stop() {
	if p.cmd.ProcessState == nil {
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
	}
}
