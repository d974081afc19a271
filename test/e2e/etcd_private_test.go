package e2e

import (
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// TestEmbeddedEtcdIsPrivate is issue 14's first must-show: besides the API ports, every socket
// `apictl serve` listens on refuses an etcd client without apictl's credentials, plain and over TLS
// without a client certificate, and the data directory is the owner's alone.
func TestEmbeddedEtcdIsPrivate(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads the socket table from /proc")
	}
	ports := freePorts(t, 2)
	dir := t.TempDir()
	p := serveReady(t, dir, ports)
	listening, err := listeningPorts(p.cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	others := 0
	for _, port := range listening {
		if port == ports[0] || port == ports[1] {
			continue
		}
		others++
		for _, c := range []struct {
			name, scheme string
			tls          *tls.Config
		}{
			{"plain", "http", nil},
			{"TLS without a client certificate", "https", &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // the attacker's view
		} {
			endpoint := fmt.Sprintf("%s://127.0.0.1:%d", c.scheme, port)
			if err := plantObject(endpoint, c.tls); err == nil {
				t.Errorf("port %d: an etcd client %s wrote to it", port, c.name)
			}
		}
	}
	if others == 0 {
		t.Logf("no socket besides the API ports %v: nothing to attack", ports)
	}
	data := filepath.Join(dir, "apictl.local")
	fi, err := os.Stat(data)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o700 {
		t.Errorf("data directory %s: mode %o, want 700", data, perm)
	}
}

// plantObject tries what an attacker on the host would: write a ConfigMap straight into etcd.
func plantObject(endpoint string, tlsConfig *tls.Config) error {
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, TLS: tlsConfig, DialTimeout: time.Second, Logger: zap.NewNop()})
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err = c.Put(ctx, "/registry/configmaps/kube-system/planted", `{"apiVersion":"v1","kind":"ConfigMap"}`)
	return err
}

// listeningPorts reads the TCP ports process pid listens on from the kernel's socket tables.
func listeningPorts(pid int) ([]int, error) {
	inodes := map[string]bool{}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return nil, err
	}
	for _, fd := range fds {
		target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if err == nil && strings.HasPrefix(target, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(target, "socket:["), "]")] = true
		}
	}
	var ports []int
	for _, table := range []string{"tcp", "tcp6"} {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, table))
		if err != nil {
			return nil, err
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			f := strings.Fields(line)
			// local_address is f[1] (hex ip:port), st is f[3] (0A = LISTEN), inode is f[9].
			if len(f) < 10 || f[3] != "0A" || !inodes[f[9]] {
				continue
			}
			_, hexPort, _ := strings.Cut(f[1], ":")
			port, err := strconv.ParseInt(hexPort, 16, 32)
			if err != nil {
				return nil, fmt.Errorf("%s: %q: %w", table, line, err)
			}
			ports = append(ports, int(port))
		}
	}
	if len(ports) == 0 {
		return nil, fmt.Errorf("process %d listens on no TCP port", pid)
	}
	return ports, nil
}
