package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apictl/apictl/internal/testtool"
)

// kubectl runs the real kubectl with a private cache dir and returns its combined output.
func kubectl(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(testtool.Tool(t, "kubectl"), append([]string{"--cache-dir", filepath.Join(t.TempDir(), "cache")}, args...)...)
	cmd.Env = append(os.Environ(), "KUBECONFIG=/nonexistent")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// serveReady starts apictl serve in dir on the given ports and waits for /readyz.
func serveReady(t *testing.T, dir string, ports []int) *process {
	t.Helper()
	p := startServeIn(t, dir, "--secure-port", fmt.Sprint(ports[0]), "--insecure-port", fmt.Sprint(ports[1]), "--bind-address", "127.0.0.1")
	waitReady(t, ports[1])
	return p
}

// TestKubectlEverydayCommands is the storage issue's first must-show: kubectl against a fresh
// `apictl serve`, over plain HTTP and over TLS with the bootstrapped admin kubeconfig, and the data
// still there after a restart.
func TestKubectlEverydayCommands(t *testing.T) {
	ports := freePorts(t, 2)
	dir := t.TempDir()
	p := serveReady(t, dir, ports)
	insecure := []string{"-s", fmt.Sprintf("http://127.0.0.1:%d", ports[1])}
	kubeconfig := []string{"--kubeconfig", filepath.Join(dir, "apictl.local", "pki", "admin.kubeconfig")}

	for _, via := range []struct {
		name string
		conn []string
		ns   string
	}{{"insecure", insecure, "demo"}, {"tls", kubeconfig, "demo-tls"}} {
		t.Run(via.name, func(t *testing.T) {
			k := func(args ...string) string { return kubectl(t, append(via.conn, args...)...) }
			expect := func(out string, parts ...string) {
				t.Helper()
				for _, part := range parts {
					if !strings.Contains(out, part) {
						t.Errorf("output lacks %q:\n%s", part, out)
					}
				}
			}
			expect(k("create", "namespace", via.ns), "namespace/"+via.ns+" created")
			expect(k("-n", via.ns, "create", "configmap", "app", "--from-literal=a=1"), "configmap/app created")
			expect(k("-n", via.ns, "get", "configmaps"), "NAME", "app")
			expect(k("get", "cm", "-A"), "NAMESPACE", via.ns)
			expect(k("-n", via.ns, "get", "cm", "app", "-o", "yaml"), "kind: ConfigMap", "a: \"1\"", "resourceVersion:", "uid:")
			expect(k("-n", via.ns, "delete", "cm", "app"), `configmap "app" deleted`)
			expect(k("api-resources"), "configmaps", "cm", "leases", "clusterrolebindings")
			expect(k("api-versions"), "v1", "coordination.k8s.io/v1", "rbac.authorization.k8s.io/v1")
			expect(k("-n", via.ns, "create", "configmap", "kept", "--from-literal=b=2"), "configmap/kept created")
		})
	}

	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("exit %d\n%s", code, p.output)
	}
	serveReady(t, dir, ports)
	out := kubectl(t, append(insecure, "get", "cm", "-A")...)
	for _, ns := range []string{"demo", "demo-tls"} {
		if !strings.Contains(out, ns) || !strings.Contains(out, "kept") {
			t.Errorf("after a restart the data is gone:\n%s", out)
		}
	}
}
