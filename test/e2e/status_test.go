package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// apictlStatus runs `apictl status` on a member's data dir and returns its exit code and output.
func apictlStatus(t *testing.T, dataDir string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"status", "--data-dir", dataDir}, args...)...)
	out, err := cmd.CombinedOutput()
	if _, exited := err.(*exec.ExitError); err != nil && !exited {
		t.Fatalf("running apictl status: %v", err)
	}
	return cmd.ProcessState.ExitCode(), string(out)
}

// waitStatus runs `apictl status` until it exits with code and prints line, which etcd's failure
// detection reaches within seconds.
func waitStatus(t *testing.T, dataDir string, code int, line string) string {
	t.Helper()
	var got int
	var out string
	deadline := time.Now().Add(30 * time.Second)
	for {
		began := time.Now()
		got, out = apictlStatus(t, dataDir)
		// A degraded cluster waits out the timeouts of what no longer answers (the Lease needs a
		// quorum, readyz's etcd check its 2 s); the report still comes, within the gathering's 5 s.
		if took := time.Since(began); took > 10*time.Second {
			t.Errorf("apictl status took %s", took)
		}
		if got == code && strings.Contains(out, line) {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("apictl status: exit %d, want %d and a line with %q:\n%s", got, code, line, out)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// TestStatusEmbeddedCluster shows a three-member embedded cluster, then loses a member (a warning:
// the cluster still has its quorum), then a second (a problem: no leader).
func TestStatusEmbeddedCluster(t *testing.T) {
	ms := newHAMembers(t, "a", "b", "c")
	a, b, c := ms[0], ms[1], ms[2]
	a.startReady(t, "--cluster-init")
	b.startReady(t, "--join", a.joinURL(), "--join-token", a.token(t))
	c.startReady(t, "--join", b.joinURL(), "--join-token", b.token(t))
	dataDir := filepath.Join(a.dir, "apictl.local")

	// The other two members' sizes and indexes come from their replicas' member Leases, renewed
	// every 10 s: this member cannot ask them.
	out := waitStatus(t, dataDir, 0, "no warnings, no problems")
	for deadline := time.Now().Add(40 * time.Second); strings.Count(out, "\treported ") < 2 && time.Now().Before(deadline); {
		time.Sleep(time.Second)
		out = waitStatus(t, dataDir, 0, "no warnings, no problems")
	}
	t.Logf("three members:\n%s", out)
	if n := strings.Count(out, "\netcd\t"); n != 3 {
		t.Errorf("%d etcd rows, want 3:\n%s", n, out)
	}
	if n := strings.Count(out, "\treported "); n != 2 || strings.Contains(out, "\t-\t-\t-\t-\t-\t") {
		t.Errorf("%d members with reported sizes, want the 2 this one cannot ask, and no member without sizes:\n%s", n, out)
	}
	_, js := apictlStatus(t, dataDir, "-o", "json")
	t.Logf("three members, -o json:\n%s", js)
	var report struct {
		Controllers struct {
			Servers []string `json:"servers"`
		} `json:"controllers"`
	}
	if err := json.Unmarshal([]byte(js), &report); err != nil {
		t.Fatal(err)
	}
	// kube-apiserver's identity Lease is one per host: the three replicas share it.
	if s := report.Controllers.Servers; len(s) != 1 || !strings.HasPrefix(s[0], "apiserver-") {
		t.Errorf("servers %q, want the one identity Lease of this host, apiserver-<hash>_<uuid>", s)
	}

	c.kill(t)
	out = waitStatus(t, dataDir, 1, "does not answer: member ")
	t.Logf("c killed:\n%s", out)

	b.kill(t)
	out = waitStatus(t, dataDir, 2, "etcd has no leader")
	t.Logf("b killed too:\n%s", out)
}

// TestStatusNoSpace fills etcd to a low quota until it raises NOSPACE: the alarm is a problem.
func TestStatusNoSpace(t *testing.T) {
	ports := freePorts(t, 2)
	p := startServe(t, "--secure-port", fmt.Sprint(ports[0]), "--insecure-port", fmt.Sprint(ports[1]),
		"--bind-address", "127.0.0.1", "--etcd-quota-backend-bytes", fmt.Sprint(16<<20))
	waitReady(t, ports[1])
	t.Cleanup(func() { stopServe(t, p) })
	dataDir := filepath.Join(p.dir, "apictl.local")
	c := diskClient{t: t, base: fmt.Sprintf("http://127.0.0.1:%d", ports[1])}
	full := false
	for i := 0; !full && i < 200; i++ {
		switch code, body := c.do(http.MethodPost, "/api/v1/namespaces/default/configmaps", configMapBody(fmt.Sprintf("big-%d", i), 512<<10)); code {
		case http.StatusCreated:
		case http.StatusInternalServerError:
			full = true
		default:
			t.Fatalf("create: %d %s", code, body)
		}
	}
	if !full {
		t.Fatal("etcd took 100 MiB under a 16 MiB quota")
	}
	out := waitStatus(t, dataDir, 2, "etcd alarm NOSPACE on member ")
	t.Logf("NOSPACE:\n%s", out)
}
