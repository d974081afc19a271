package bench

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// shell returns sh's path, skipping tests on systems without one.
func shell(t *testing.T) string {
	t.Helper()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh on this system")
	}
	return sh
}

func TestProcessStopsOnSIGTERM(t *testing.T) {
	p, err := startProcess("sleeper", shell(t), []string{"-c", `trap 'echo bye; exit 0' TERM; echo hello; while :; do sleep 0.01; done`}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.waitFor(ctx, "hello", 5*time.Millisecond, func(context.Context) bool { return strings.Contains(p.output.String(), "hello") }); err != nil {
		t.Fatal(err)
	}
	if err := p.exited(); err != nil {
		t.Fatalf("running process reported as exited: %v", err)
	}
	if err := p.stop(); err != nil {
		t.Fatal(err)
	}
	if err := p.exited(); err == nil {
		t.Error("stopped process not reported as exited")
	}
	if !strings.Contains(p.output.String(), "bye") {
		t.Errorf("the process did not get SIGTERM; output %q", p.output.String())
	}
	if err := p.stop(); err != nil {
		t.Errorf("second stop: %v", err)
	}
}

func TestProcessWaitForEndsWhenTheProcessExits(t *testing.T) {
	p, err := startProcess("quitter", shell(t), []string{"-c", "echo cannot bind; exit 3"}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer p.stop()
	err = p.waitFor(context.Background(), "readiness", 5*time.Millisecond, func(context.Context) bool { return false })
	if err == nil || !strings.Contains(err.Error(), "quitter exited (exit status 3)") || !strings.Contains(err.Error(), "cannot bind") {
		t.Errorf("error %v, want the exit status and the output", err)
	}
}

func TestProcessWaitForEndsWithTheContext(t *testing.T) {
	p, err := startProcess("sleeper", shell(t), []string{"-c", "exec sleep 30"}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer p.stop()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := p.waitFor(ctx, "readiness", 5*time.Millisecond, func(context.Context) bool { return false }); err == nil ||
		!strings.Contains(err.Error(), "waiting for readiness: context canceled") {
		t.Errorf("error %v, want the context's", err)
	}
}

func TestStartProcessFailure(t *testing.T) {
	if _, err := startProcess("nothing", filepath.Join(t.TempDir(), "missing"), nil, t.TempDir()); err == nil ||
		!strings.Contains(err.Error(), "starting nothing") {
		t.Errorf("error %v, want one about starting nothing", err)
	}
}
