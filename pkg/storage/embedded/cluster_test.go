package embedded

import (
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apictl/apictl/pkg/certs"
)

// peerPort returns a port that was free a moment ago.
func peerPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestClusterOfTwo founds a cluster, adds a learner, starts it, promotes it, and checks both members
// serve one keyspace, a rejoin at the same peer URL replaces the stale entry, and a lost quorum is
// reported by WaitLeader.
func TestClusterOfTwo(t *testing.T) {
	ctx := testContext(t)
	pki := t.TempDir() // one etcd CA for both: a joiner gets it from the member it joins through
	peer, err := certs.EnsureEtcdPeer(ctx, pki, []string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	creds := Credentials{CAFile: peer.CAFile, CertFile: peer.CertFile, KeyFile: peer.KeyFile}
	urlA := fmt.Sprintf("https://127.0.0.1:%d", peerPort(t))
	a := start(t, Config{Private: true, Cluster: &ClusterConfig{Name: "a", PeerURL: urlA, Peer: creds}})
	if got := a.PeerURL(); got != urlA {
		t.Fatalf("PeerURL = %q", got)
	}
	if _, err := start(t, Config{}).AddLearner(ctx, "x", "https://127.0.0.1:1"); err == nil {
		t.Fatal("a member alone added a learner")
	}
	urlB := fmt.Sprintf("https://127.0.0.1:%d", peerPort(t))
	initial, err := a.AddLearner(ctx, "b", urlB)
	if err != nil {
		t.Fatal(err)
	}
	if want := "a=" + urlA + ",b=" + urlB; initial != want {
		t.Fatalf("initial cluster %q, want %q", initial, want)
	}
	// etcd takes one learner at a time; the stale learner at urlB is replaced, not doubled.
	if _, err := a.AddLearner(ctx, "b", urlB); err != nil {
		t.Fatalf("adding b again at the same peer URL: %v", err)
	}
	dirB := filepath.Join(t.TempDir(), "etcd")
	b := start(t, Config{Dir: dirB, Private: true, Cluster: &ClusterConfig{Name: "b", PeerURL: urlB, Peer: creds, InitialCluster: initial}})
	if err := b.Promote(ctx); err != nil {
		t.Fatal(err)
	}
	if b.IsLearner() {
		t.Fatal("b is still a learner after Promote")
	}
	if n, err := MemberName(dirB, "other"); err != nil || n != "b" {
		t.Fatalf("MemberName = %q, %v; want the recorded b", n, err)
	}
	if !IsClusterMember(dirB) {
		t.Fatal("IsClusterMember(b) = false")
	}
	var names []string
	for _, m := range a.Members() {
		names = append(names, m.Name)
		if m.Learner {
			t.Fatalf("%s is a learner", m.Name)
		}
	}
	if strings.Join(names, ",") != "a,b" && strings.Join(names, ",") != "b,a" {
		t.Fatalf("members %v", names)
	}
	if _, err := clientTLS(t, a).Put(ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}
	resp, err := clientTLS(t, b).Get(ctx, "k")
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("b reads %v, %v", resp, err)
	}
	if err := a.WaitLeader(ctx); err != nil {
		t.Fatalf("WaitLeader with both up: %v", err)
	}
	// Two members, one gone: no quorum, and WaitLeader says so within its wait.
	if err := b.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// a, the leader or made one as b stopped, steps down once it has not heard from a quorum for an
	// election timeout (CheckQuorum).
	for stepDown := time.Now(); a.etcd.Server.Leader() != 0; time.Sleep(20 * time.Millisecond) {
		if time.Since(stepDown) > 10*time.Second {
			t.Fatal("a still has a leader 10s after b stopped")
		}
	}
	began := time.Now()
	err = a.WaitLeader(ctx)
	if err != ErrNoQuorum {
		t.Fatalf("WaitLeader without quorum = %v, want ErrNoQuorum", err)
	}
	if took := time.Since(began); took > quorumWait+time.Second {
		t.Fatalf("WaitLeader took %s", took)
	}
}

// clientTLS is a client of a private member, with the member's own client certificate.
func clientTLS(t *testing.T, s *Server) *clientv3.Client {
	t.Helper()
	creds, _ := s.ClientCredentials()
	cfg, err := transport.TLSInfo{CertFile: creds.CertFile, KeyFile: creds.KeyFile, TrustedCAFile: creds.CAFile}.ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	c, err := clientv3.New(clientv3.Config{Endpoints: s.ClientURLs(), TLS: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
