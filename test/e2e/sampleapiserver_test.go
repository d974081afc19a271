package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/apictl/apictl/pkg/certs"
	"github.com/apictl/apictl/pkg/storage/embedded"
)

// sampleModule is the upstream extension API server the aggregation test runs unchanged.
const sampleModule = "k8s.io/sample-apiserver"

// sampleAPIServer is what the aggregation test needs of k8s.io/sample-apiserver: the program and the
// module's source, whose artifacts/example holds the upstream RBAC manifests for it.
type sampleAPIServer struct {
	version string
	binary  string
	source  string
}

// buildSampleAPIServer returns k8s.io/sample-apiserver at the version of go.mod's k8s.io/apiserver,
// built once and then kept in the user's cache directory keyed by version and platform, so that later
// runs start at once. A build that cannot happen (no module proxy, no network) fails the test: the
// aggregation layer's headline check must never pass by not running.
func buildSampleAPIServer(t *testing.T) sampleAPIServer {
	t.Helper()
	version := goCommand(t, "", "list", "-m", "-f", "{{.Version}}", "k8s.io/apiserver")
	if version == "" || strings.Contains(version, " ") {
		t.Fatalf("go list -m k8s.io/apiserver gave no usable version: %q", version)
	}
	s := sampleAPIServer{version: version}
	cache := sampleCacheDir(t)
	s.binary = filepath.Join(cache, fmt.Sprintf("sample-apiserver-%s-%s-%s", version, runtime.GOOS, runtime.GOARCH))

	// The module's source is needed for its manifests whether or not the program is cached; go mod
	// download is instant when the module cache has it.
	work := t.TempDir()
	var info struct{ Dir, Error string }
	if err := json.Unmarshal([]byte(goCommand(t, work, "mod", "download", "-json", sampleModule+"@"+version)), &info); err != nil || info.Dir == "" {
		t.Fatalf("go mod download %s@%s: no module directory (%v, %s)", sampleModule, version, err, info.Error)
	}
	s.source = info.Dir

	if st, err := os.Stat(s.binary); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
		return s
	}
	started := time.Now()
	goCommand(t, work, "install", sampleModule+"@"+version)
	built := filepath.Join(work, "bin", "sample-apiserver")
	// A rename within the cache directory is atomic, so a concurrent run sees the whole program or none.
	tmp, err := os.CreateTemp(cache, "sample-apiserver-*.partial")
	if err != nil {
		t.Fatal(err)
	}
	tmp.Close()
	if err := copyFile(built, tmp.Name()); err != nil {
		os.Remove(tmp.Name())
		t.Fatalf("caching sample-apiserver: %v", err)
	}
	if err := os.Rename(tmp.Name(), s.binary); err != nil {
		os.Remove(tmp.Name())
		t.Fatalf("caching sample-apiserver: %v", err)
	}
	t.Logf("built %s@%s in %s, cached as %s", sampleModule, version, time.Since(started).Round(time.Second), s.binary)
	return s
}

// goCommand runs the go tool in dir (the test's own directory when empty) and returns its trimmed
// output, failing the test with go's message otherwise. Outside the module it runs with GOWORK off and
// GOBIN in dir, so that installing a module at a version touches nothing of apictl's.
func goCommand(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if dir != "" {
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-buildvcs=false", "GOBIN="+filepath.Join(dir, "bin"))
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s (this test needs %s from the Go module proxy or the module cache): %v\n%s%s",
			strings.Join(args, " "), sampleModule, err, out, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// sampleCacheDir is where built programs are kept between runs: <user cache dir>/apictl-e2e.
func sampleCacheDir(t *testing.T) string {
	t.Helper()
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	dir := filepath.Join(base, "apictl-e2e")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("the build cache: %v", err)
	}
	return dir
}

// copyFile copies the program from to the (existing) file to, executable.
func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Chmod(to, 0o755)
}

// startEtcd runs an embedded etcd of the test's own on loopback: the extension server keeps its
// objects apart from apictl's, as a real one does.
func startEtcd(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e, err := embedded.Start(ctx, embedded.Config{Dir: t.TempDir(), UnsafeNoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := e.Close(ctx); err != nil {
			t.Errorf("stopping the extension server's etcd: %v", err)
		}
	})
	return e.ClientURLs()[0]
}

// servingPKI makes a CA and a serving certificate for an extension server. hosts are the SANs beyond
// localhost and 127.0.0.1; the aggregator verifies the name <service>.<namespace>.svc.
func servingPKI(t *testing.T, hosts ...string) *certs.Report {
	t.Helper()
	spec := certs.NewServingSpec(t.TempDir())
	spec.Hosts = hosts
	report, err := certs.EnsureServing(context.Background(), spec)
	if err != nil {
		t.Fatalf("the extension server's certificates: %v", err)
	}
	return report
}

// startProgram runs a program in dir with its output collected, and kills it when the test ends.
func startProgram(t *testing.T, dir, name string, args ...string) *process {
	t.Helper()
	p := &process{output: &syncBuffer{}, dir: dir, done: make(chan error, 1)}
	p.cmd = exec.Command(name, args...)
	p.cmd.Dir = dir
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

// waitHealthy polls url (over TLS verified by caFile) until it answers 200, failing when the program
// exits or the URL does not answer 200 within d. The failure names the failing checks of a
// ?verbose health endpoint; the caller shows the program's output.
func waitHealthy(t *testing.T, p *process, url, caFile string, d time.Duration) {
	t.Helper()
	pem, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatalf("%s holds no certificate", caFile)
	}
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	defer client.CloseIdleConnections()
	deadline := time.Now().Add(d)
	for {
		select {
		case <-p.done:
			t.Fatalf("%s exited: %v", filepath.Base(p.cmd.Path), p.cmd.ProcessState)
		default:
		}
		code, body, err := get(client, url)
		if err == nil && code == http.StatusOK {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not 200 within %s; last answer: %d %s %v", url, d, code, failingChecks(body), err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// failingChecks keeps the "[-]" lines of a verbose health answer, or all of it when it has none.
func failingChecks(body string) string {
	var failing []string
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, "[-]") {
			failing = append(failing, line)
		}
	}
	if len(failing) == 0 {
		return body
	}
	return strings.Join(failing, "; ")
}
