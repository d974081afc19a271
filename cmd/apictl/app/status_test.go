package app

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apictl/apictl/internal/servertest"
	"github.com/apictl/apictl/pkg/flags"
	"github.com/apictl/apictl/pkg/status"
)

func TestStatusUsage(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"status", "--kubeconfig", "k", "--data-dir", "d"}, "--kubeconfig and --data-dir (or --cert-dir) name two servers: give one"},
		{[]string{"status", "--interval", "0s"}, "--interval 0s must be greater than zero, like 5s"},
		{[]string{"status", "-o", "wide"}, `unknown output format "wide": use one of table, json, yaml`},
	}
	for _, tt := range tests {
		code, _, stderr := run(t, false, tt.args...)
		if code != ExitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q, want %d and %q", tt.args, code, stderr, ExitUsage, tt.want)
		}
	}
}

// TestStatusWithoutServer reads a data dir whose server is down: the certificates are shown, and
// the server is the problem that makes the exit code 2.
func TestStatusWithoutServer(t *testing.T) {
	dir := chdirTemp(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close() // nothing answers there now
	dataDir := filepath.Join(dir, "data")
	if code, _, stderr := run(t, false, "certs", "init", "--data-dir", dataDir, "--secure-port", port, "--validity", "20d"); code != ExitOK {
		t.Fatalf("certs init: exit %d: %s", code, stderr)
	}
	code, out, stderr := run(t, true, "status", "--data-dir", dataDir)
	if code != status.ExitProblems {
		t.Errorf("exit %d, want %d\n%s%s", code, status.ExitProblems, out, stderr)
	}
	for _, want := range []string{
		"!!   server         the server's status could not be read: asking https://127.0.0.1:" + port + "/apictl/v1/status:",
		"!    certificates   certificate apiserver (",
		"CERTIFICATES",
		"SNAPSHOTS",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestStatusAgainstServer asks a running server by its kubeconfig and by its data dir, in each
// format, and refreshes with --watch until the context ends.
func TestStatusAgainstServer(t *testing.T) {
	t.Setenv(servertest.EnvAuthorizationMode, "")
	s := servertest.Start(t)
	waitForControllersLease(t, s)
	code, out, stderr := run(t, true, "status", "--kubeconfig", s.AdminKubeconfig)
	if code != status.ExitHealthy {
		t.Errorf("exit %d, want 0\n%s%s", code, out, stderr)
	}
	for _, want := range []string{"STATUS: HEALTHY (exit 0)", "SERVER", "ETCD (embedded)", "SNAPSHOTS", "CERTIFICATES", "CONTROLLERS", "API: ", "LOAD"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = run(t, false, "status", "--data-dir", s.DataDir, "-o", "json")
	var r status.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != status.ExitHealthy || r.APIVersion != status.APIVersion || r.Server.URL != s.SecureURL {
		t.Errorf("-o json by the data dir: exit %d, %v, report %+v", code, err, r.Server)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2500*time.Millisecond)
	defer cancel()
	var b strings.Builder
	code = Main(ctx, []string{"status", "--kubeconfig", s.AdminKubeconfig, "--watch", "--interval", "500ms", "-o", "json"},
		Streams{In: strings.NewReader(""), Out: &b, ErrOut: &b})
	if n := strings.Count(b.String(), `"apiVersion": "apictl.io/v1"`); code != status.ExitHealthy || n < 2 {
		t.Errorf("--watch for 2.5s every 500ms: exit %d, %d reports:\n%.2000s", code, n, b.String())
	}
}

// waitForControllersLease waits until a replica holds the controllers' Lease. Ready does not wait for
// it (kube's /readyz has no leader-election check either), and until it is held status rightly warns.
func waitForControllersLease(t *testing.T, s *servertest.Server) {
	t.Helper()
	c, err := s.HTTPClient()
	if err != nil {
		t.Fatal(err)
	}
	url := s.SecureURL + "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/" + flags.DefaultLeaderElectionLease
	deadline := time.Now().Add(time.Minute)
	for {
		resp, err := c.Get(url)
		last := fmt.Sprint(err)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
			last = resp.Status
		}
		if time.Now().After(deadline) {
			t.Fatalf("no replica took the controllers' Lease within a minute: GET %s: %s", url, last)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
