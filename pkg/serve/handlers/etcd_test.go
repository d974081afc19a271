package handlers_test

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apictl/apictl/pkg/storage/embedded"
)

// externalEtcd is an etcd the test runs itself, for servers started with --etcd-servers.
type externalEtcd struct {
	endpoint string
	client   *clientv3.Client
}

func startEtcd(t *testing.T) *externalEtcd {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := embedded.Start(ctx, embedded.Config{Dir: t.TempDir(), UnsafeNoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close(context.Background()) })
	client, err := clientv3.New(clientv3.Config{Endpoints: srv.ClientURLs(), DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return &externalEtcd{endpoint: srv.ClientURLs()[0], client: client}
}

// compact compacts etcd at its current revision.
func (e *externalEtcd) compact(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := e.client.Get(ctx, "compact-probe")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.Compact(ctx, resp.Header.Revision, clientv3.WithCompactPhysical()); err != nil {
		t.Fatal(err)
	}
}
