package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// diskClient talks to a server's insecure port.
type diskClient struct {
	t    *testing.T
	base string
}

func (c diskClient) do(method, path, body string) (int, string) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// configMapBody is a ConfigMap with size bytes of data.
func configMapBody(name string, size int) string {
	return fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q},"data":{"blob":%q}}`, name, strings.Repeat("x", size))
}

// watchNames watches the ConfigMaps of namespace from resourceVersion rv and sends the name of each
// added one until the test ends.
func watchNames(t *testing.T, base, namespace, rv string) <-chan string {
	ctx, cancel := context.WithCancel(context.Background())
	names := make(chan string, 1000)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/v1/namespaces/"+namespace+"/configmaps?watch=1&resourceVersion="+rv, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		defer resp.Body.Close()
		s := bufio.NewScanner(resp.Body)
		s.Buffer(make([]byte, 1<<20), 4<<20)
		for s.Scan() {
			var e struct {
				Type   string `json:"type"`
				Object struct {
					Metadata struct {
						Name string `json:"name"`
					} `json:"metadata"`
				} `json:"object"`
			}
			if json.Unmarshal(s.Bytes(), &e) == nil && e.Type == "ADDED" {
				names <- e.Object.Metadata.Name
			}
		}
	})
	t.Cleanup(func() { cancel(); wg.Wait() })
	return names
}

func resourceVersion(t *testing.T, body string) string {
	t.Helper()
	var l struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal([]byte(body), &l); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	return l.Metadata.ResourceVersion
}

// TestDiskFull is issue 14's disk-full must-show on a small filesystem of its own (a tmpfs): when the
// disk fills, writes get a Status while reads and watches go on, /readyz says why, nothing
// acknowledged is lost, writes resume once space is freed, and the process never exits.
func TestDiskFull(t *testing.T) {
	mnt := filepath.Join(t.TempDir(), "small")
	if err := os.Mkdir(mnt, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, "size=320m"); err != nil {
		t.Skipf("cannot mount a small filesystem here (%v); TestNoSpaceAlarm covers etcd's quota", err)
	}
	t.Cleanup(func() { _ = unix.Unmount(mnt, unix.MNT_DETACH) })

	ports := freePorts(t, 2)
	p := startServe(t, "--secure-port", fmt.Sprint(ports[0]), "--insecure-port", fmt.Sprint(ports[1]),
		"--bind-address", "127.0.0.1", "--data-dir", filepath.Join(mnt, "data"))
	waitReady(t, ports[1])
	t.Cleanup(func() { stopServe(t, p) })
	c := diskClient{t: t, base: fmt.Sprintf("http://127.0.0.1:%d", ports[1])}
	const ns = "/api/v1/namespaces/default/configmaps"

	var acknowledged []string
	create := func(name string) (int, string) {
		code, body := c.do(http.MethodPost, ns, configMapBody(name, 64<<10))
		if code == http.StatusCreated {
			acknowledged = append(acknowledged, name)
		}
		return code, body
	}
	for i := range 10 {
		if code, body := create(fmt.Sprintf("before-%d", i)); code != http.StatusCreated {
			t.Fatalf("create: %d %s", code, body)
		}
	}
	_, list := c.do(http.MethodGet, ns, "")
	added := watchNames(t, c.base, "default", resourceVersion(t, list))

	// Someone else fills the disk, leaving less than the reserve etcd needs.
	var st unix.Statfs_t
	if err := unix.Statfs(mnt, &st); err != nil {
		t.Fatal(err)
	}
	filler := filepath.Join(mnt, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Fallocate(int(f.Fd()), 0, 0, int64(st.Bavail)*st.Bsize-80<<20); err != nil {
		t.Fatal(err)
	}
	f.Close()

	var refused string
	waitFor(t, 10*time.Second, "writes to be refused", func() bool {
		code, body := create(fmt.Sprintf("during-%d", len(acknowledged)))
		if code == http.StatusCreated {
			return false
		}
		if code != http.StatusInternalServerError {
			t.Fatalf("a write on a full disk: %d %s, want 500", code, body)
		}
		refused = body
		return true
	})
	if !strings.Contains(refused, `"code":500`) || !strings.Contains(refused, "reserve") {
		t.Errorf("refusal: %s", refused)
	}
	if code, body := c.do(http.MethodGet, ns+"/before-0", ""); code != http.StatusOK {
		t.Errorf("a read on a full disk: %d %s", code, body)
	}
	if code, body := c.do(http.MethodGet, "/readyz?verbose", ""); code == http.StatusOK || !strings.Contains(body, "etcd-space") {
		t.Errorf("/readyz on a full disk: %d %s", code, body)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "writes to resume", func() bool {
		code, _ := create(fmt.Sprintf("after-%d", len(acknowledged)))
		return code == http.StatusCreated
	})
	waitReady(t, ports[1])
	last := acknowledged[len(acknowledged)-1]
	waitFor(t, 10*time.Second, "the watch opened before to see the write after", func() bool {
		for {
			select {
			case n := <-added:
				if n == last {
					return true
				}
			default:
				return false
			}
		}
	})
	checkAcknowledged(t, c, ns, acknowledged)
	if p.cmd.ProcessState != nil {
		t.Fatalf("the server exited:\n%s", p.output)
	}
}

// TestNoSpaceAlarm fills etcd's database to a small quota: writes get kube's answer to etcd's
// "database space exceeded", reads go on, and once objects are deleted the server compacts,
// defragments and disarms the alarm by itself, and writes resume.
func TestNoSpaceAlarm(t *testing.T) {
	ports := freePorts(t, 2)
	p := startServe(t, "--secure-port", fmt.Sprint(ports[0]), "--insecure-port", fmt.Sprint(ports[1]),
		"--bind-address", "127.0.0.1", "--etcd-quota-backend-bytes", fmt.Sprint(16<<20))
	waitReady(t, ports[1])
	t.Cleanup(func() { stopServe(t, p) })
	c := diskClient{t: t, base: fmt.Sprintf("http://127.0.0.1:%d", ports[1])}
	const ns = "/api/v1/namespaces/default/configmaps"

	var acknowledged []string
	var refused string
	for i := 0; refused == "" && i < 200; i++ {
		name := fmt.Sprintf("big-%d", i)
		switch code, body := c.do(http.MethodPost, ns, configMapBody(name, 512<<10)); code {
		case http.StatusCreated:
			acknowledged = append(acknowledged, name)
		case http.StatusInternalServerError:
			refused = body
		default:
			t.Fatalf("create %s: %d %s", name, code, body)
		}
	}
	// kube-apiserver passes etcd's error on as a 500 Status without a reason.
	want := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"etcdserver: mvcc: database space exceeded","code":500}`
	if strings.TrimSpace(refused) != want {
		t.Fatalf("a write over the quota:\n got %s\nwant %s", refused, want)
	}
	if code, body := c.do(http.MethodGet, ns+"/"+acknowledged[0], ""); code != http.StatusOK {
		t.Errorf("a read over the quota: %d %.200s", code, body)
	}
	waitFor(t, 5*time.Second, "/readyz to name the alarm", func() bool {
		code, body := c.do(http.MethodGet, "/readyz?verbose", "")
		return code != http.StatusOK && strings.Contains(body, "etcd-space")
	})
	for _, name := range acknowledged[1:] {
		if code, body := c.do(http.MethodDelete, ns+"/"+name, ""); code != http.StatusOK {
			t.Fatalf("delete over the quota: %d %.200s", code, body)
		}
	}
	waitFor(t, 40*time.Second, "writes to resume", func() bool {
		code, _ := c.do(http.MethodPost, ns, configMapBody(fmt.Sprintf("after-%d", time.Now().UnixNano()), 1<<10))
		return code == http.StatusCreated
	})
	checkAcknowledged(t, c, ns, acknowledged[:1])
	if p.cmd.ProcessState != nil {
		t.Fatalf("the server exited:\n%s", p.output)
	}
}

// checkAcknowledged fails unless every name is stored.
func checkAcknowledged(t *testing.T, c diskClient, ns string, names []string) {
	t.Helper()
	for _, name := range names {
		if code, body := c.do(http.MethodGet, ns+"/"+name, ""); code != http.StatusOK {
			t.Errorf("acknowledged %s is gone: %d %.200s", name, code, body)
		}
	}
}

// stopServe stops the server gracefully and requires exit 0.
func stopServe(t *testing.T, p *process) {
	t.Helper()
	if p.cmd.ProcessState != nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.wait(t, 30*time.Second); code != 0 {
		t.Errorf("exit %d\n%s", code, p.output)
	}
}

// TestStartOnAFullDisk: too little space to start is one clear line and exit 1, not a panic.
func TestStartOnAFullDisk(t *testing.T) {
	mnt := filepath.Join(t.TempDir(), "tiny")
	if err := os.Mkdir(mnt, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, "size=48m"); err != nil {
		t.Skipf("cannot mount a small filesystem here: %v", err)
	}
	t.Cleanup(func() { _ = unix.Unmount(mnt, unix.MNT_DETACH) })
	ports := freePorts(t, 2)
	p := startServe(t, "--secure-port", fmt.Sprint(ports[0]), "--insecure-port", fmt.Sprint(ports[1]),
		"--bind-address", "127.0.0.1", "--data-dir", filepath.Join(mnt, "data"))
	if code := p.wait(t, 30*time.Second); code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, p.output)
	}
	out := p.output.String()
	if !strings.Contains(out, "etcd needs at least 96.0 MiB to start: free some space or choose another --data-dir") {
		t.Errorf("no clear reason:\n%s", out)
	}
	if strings.Contains(out, "goroutine ") || strings.Contains(out, "panic") {
		t.Errorf("a stack trace:\n%s", out)
	}
}
