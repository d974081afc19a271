package handlers_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/apictl/apictl/internal/servertest"
	"github.com/apictl/apictl/pkg/storage/embedded"
)

func TestEtcdUnreachableAtStart(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	start := time.Now()
	_, err = servertest.StartE(context.Background(), t.TempDir(), "--etcd-servers", "http://"+addr, "--etcd-healthcheck-timeout", "300ms")
	if err == nil || !strings.Contains(err.Error(), addr) {
		t.Fatalf("got %v, want an error naming %s", err, addr)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("took %s to give up; the retries should be bounded by the health-check timeout", took)
	}
}

func TestEtcdLostAndBack(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	dir := t.TempDir()
	startEtcdAt := func() *embedded.Server {
		srv, err := embedded.Start(context.Background(), embedded.Config{Dir: dir, ClientAddress: addr, UnsafeNoFsync: true})
		if err != nil {
			t.Fatal(err)
		}
		return srv
	}
	etcd := startEtcdAt()
	a := newAPI(t, servertest.Start(t, "--etcd-servers", "http://"+addr, "--etcd-healthcheck-timeout", "500ms",
		"--request-timeout", "2s"))
	a.do("POST", cmPath, configMap("before", `{}`)).expect(t, 201)

	if err := etcd.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	r := a.do("GET", cmPath+"/before", "")
	if r.code != 503 && r.code != 504 {
		t.Errorf("with etcd down: %d %s, want 503 or 504", r.code, r.body)
	}
	a.do("GET", "/readyz", "").expect(t, 500, "[-]etcd failed: reason withheld")

	etcd = startEtcdAt()
	defer etcd.Close(context.Background())
	eventually(t, "readyz after etcd returns", func() bool { return a.do("GET", "/readyz", "").code == 200 })
	a.do("GET", cmPath+"/before", "").expect(t, 200, `"name":"before"`)
	a.do("POST", cmPath, configMap("after", `{}`)).expect(t, 201)
}

// TestReadyMeansCachesFilled: like kube's storage-readiness hook, /readyz holds back until every watch
// cache has its first list, so a resourceVersion=0 read right after "ready" is served from memory.
func TestReadyMeansCachesFilled(t *testing.T) {
	a := start(t)
	a.do("GET", "/readyz?verbose", "").expect(t, 200, "[+]poststarthook/storage-readiness ok")
	a.do("GET", cmPath+"?resourceVersion=0", "").expect(t, 200, `"kind":"ConfigMapList"`)
}
