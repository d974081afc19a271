package clients

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apictl/apictl/internal/servertest"
	"github.com/apictl/apictl/internal/testtool"
)

// pyInterpreter is Debian's Python, the one python3-kubernetes installs for; a python3 earlier on PATH
// (pyenv, a virtualenv) usually lacks the package.
const pyInterpreter = "/usr/bin/python3"

// pyInstall is how to get the client the suite is written for.
const pyInstall = "apt-get install -y python3-kubernetes"

// pyTimeout bounds the whole script; it bounds itself at 90s, and each of its watches carries
// timeout_seconds.
const pyTimeout = 2 * time.Minute

// TestPythonClient runs testdata/python/suite.py, a user's-eye tour of the Python Kubernetes client
// (python3-kubernetes 22.6), against a server over TLS with the admin's kubeconfig: the tutorial's
// create without apiVersion or kind, CRUD of namespaces, configmaps, secrets, leases and RBAC objects,
// a custom resource through CustomObjectsApi, the three patch types, watch with resume, paging, 404
// and 409 Status answers, and server-side apply through the dynamic client. The script asserts each
// step and exits non-zero, saying what differed, at the first failure.
func TestPythonClient(t *testing.T) {
	python := testtool.Tool(t, pyInterpreter)
	if out, err := exec.Command(python, "-c", "import kubernetes; print(kubernetes.__version__)").CombinedOutput(); err != nil {
		testtool.Missing(t, "the Python Kubernetes client is not importable by %s (install it with `%s`): %v\n%s",
			python, pyInstall, err, out)
	} else {
		t.Logf("python3-kubernetes %s", strings.TrimSpace(string(out)))
	}

	srv := servertest.Start(t, "--api-config", filepath.Join("testdata", "python", "gadgets.yaml"))
	ctx, cancel := context.WithTimeout(context.Background(), pyTimeout)
	defer cancel()
	start := time.Now()
	cmd := exec.CommandContext(ctx, python, filepath.Join("testdata", "python", "suite.py"), srv.AdminKubeconfig, t.TempDir())
	// No bytecode beside the script, and no proxy between the client and the loopback server.
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1", "PYTHONUNBUFFERED=1", "NO_PROXY=127.0.0.1", "no_proxy=127.0.0.1")
	out, err := cmd.CombinedOutput()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("suite.py did not finish within %s; its output:\n%s\nserver logs:\n%s", pyTimeout, out, pyTail(srv.Logs.String(), 8000))
	}
	if err != nil {
		t.Fatalf("suite.py: %v; its output:\n%s\nserver logs (end):\n%s", err, out, pyTail(srv.Logs.String(), 8000))
	}
	t.Logf("suite.py passed in %s:\n%s", time.Since(start).Round(time.Millisecond), out)
}

// pyTail returns the last n bytes of s, for failure messages.
func pyTail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
