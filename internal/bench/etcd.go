package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// etcdStartTimeout bounds the wait for the etcd helper to serve.
const etcdStartTimeout = 30 * time.Second

// etcdProcess is the harness's etcd: a child running the Config.Etcd program.
type etcdProcess struct {
	proc *process
	urls []string
}

// startEtcd runs the etcd program with its data in dir/etcd and waits for its URL file.
func startEtcd(ctx context.Context, program, dir string) (*etcdProcess, error) {
	urlFile := filepath.Join(dir, "etcd.url")
	proc, err := startProcess("etcd", program, []string{"-dir", filepath.Join(dir, "etcd"), "-url-file", urlFile}, dir)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, etcdStartTimeout)
	defer cancel()
	var urls []string
	err = proc.waitFor(ctx, "etcd to serve", 10*time.Millisecond, func(context.Context) bool {
		b, err := os.ReadFile(urlFile)
		if err != nil {
			return false
		}
		urls = strings.Split(strings.TrimSpace(string(b)), ",")
		return true
	})
	if err != nil {
		proc.stop()
		return nil, err
	}
	return &etcdProcess{proc: proc, urls: urls}, nil
}

// client connects to the harness's etcd.
func (e *etcdProcess) client() (*clientv3.Client, error) {
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   e.urls,
		DialTimeout: 5 * time.Second,
		// Failures reach the harness as errors; the client's own warnings would only repeat them.
		Logger: zap.NewNop(),
	})
	if err != nil {
		return nil, fmt.Errorf("connecting to etcd at %s: %w", strings.Join(e.urls, ","), err)
	}
	return cli, nil
}
