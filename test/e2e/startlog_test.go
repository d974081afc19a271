package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apictl/apictl/pkg/serve/auth/rbac"
)

// maxStartLines is issue 36's bound on what a first start prints at the default level.
const maxStartLines = 12

const adminHint = "admin credentials: use kubectl --kubeconfig "

// TestFirstStartIsQuiet is issue 36's "quiet by default": a first start on a new data dir prints at
// most maxStartLines lines, one of them the count of the default cluster RBAC objects it created,
// and its last line, after "the server is ready", is the admin kubeconfig's hint. -v 4 brings back
// a line per object.
func TestFirstStartIsQuiet(t *testing.T) {
	defaults := len(rbac.BootstrapClusterRoles()) + len(rbac.BootstrapClusterRoleBindings())
	start := func(t *testing.T, args ...string) (*process, []string) {
		t.Helper()
		ports := freePorts(t, 2)
		p := startServe(t, append([]string{"--secure-port", fmt.Sprint(ports[0]), "--insecure-port", fmt.Sprint(ports[1]),
			"--bind-address", "127.0.0.1"}, args...)...)
		waitFor(t, 30*time.Second, "the admin kubeconfig's hint", func() bool { return p.output.contains(adminHint) })
		// What the start still has to say comes within moments of readiness.
		time.Sleep(time.Second)
		out := p.output.String()
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if code := p.wait(t, 30*time.Second); code != 0 {
			t.Errorf("apictl serve exited with %d\n%s", code, p.output)
		}
		return p, strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	}

	t.Run("default level", func(t *testing.T) {
		p, lines := start(t)
		log := strings.Join(lines, "\n")
		if len(lines) > maxStartLines {
			t.Errorf("the start printed %d lines, want at most %d:\n%s", len(lines), maxStartLines, log)
		}
		kubeconfig := filepath.Join(p.dir, "apictl.local", "pki", "admin.kubeconfig")
		if last := lines[len(lines)-1]; !strings.Contains(last, adminHint+kubeconfig+" ") {
			t.Errorf("the start's last line is not the hint %q with %s:\n%s", adminHint, kubeconfig, log)
		}
		if len(lines) < 2 || !strings.Contains(lines[len(lines)-2], `msg="the server is ready"`) {
			t.Errorf("the line before the hint is not \"the server is ready\":\n%s", log)
		}
		if want := fmt.Sprintf(`msg="created %d default ClusterRoles and ClusterRoleBindings"`, defaults); !strings.Contains(log, want) {
			t.Errorf("the start does not say %s:\n%s", want, log)
		}
		if strings.Contains(log, "created a default RBAC object") {
			t.Errorf("the start lists the default RBAC objects one by one at the default level:\n%s", log)
		}
	})

	t.Run("-v 4", func(t *testing.T) {
		_, lines := start(t, "-v", "4")
		n := 0
		for _, l := range lines {
			if strings.Contains(l, `msg="created a default RBAC object"`) && strings.Contains(l, "kind=clusterrole") {
				n++
			}
		}
		if n != defaults {
			t.Errorf("-v 4 logs %d created default cluster RBAC objects one by one, want %d", n, defaults)
		}
	})
}
