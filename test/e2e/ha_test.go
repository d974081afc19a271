package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// The replicas' leader election settings: short, so that the test is quick, with client-go's
// proportions (renew deadline < lease duration, retry period < renew deadline / 1.2).
const (
	haLeaseDuration = 3 * time.Second
	haRenewDeadline = 2 * time.Second
	haRetryPeriod   = 500 * time.Millisecond
	haCompaction    = time.Second
	haLease         = "apictl-controllers"
	haDependents    = 20
)

// startEtcdCluster runs a cluster of n etcd members in the test process, each on loopback ports of
// its own, and returns their client URLs once the cluster has a leader.
func startEtcdCluster(t *testing.T, n int) []string {
	t.Helper()
	ports := freePorts(t, 2*n)
	var initial []string
	for i := range n {
		initial = append(initial, fmt.Sprintf("m%d=http://127.0.0.1:%d", i, ports[2*i+1]))
	}
	members := make([]*embed.Etcd, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		client, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", ports[2*i]))
		peer, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", ports[2*i+1]))
		cfg := embed.NewConfig()
		cfg.Name = fmt.Sprintf("m%d", i)
		cfg.Dir = filepath.Join(t.TempDir(), cfg.Name)
		cfg.UnsafeNoFsync = true
		cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*client}, []url.URL{*client}
		cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*peer}, []url.URL{*peer}
		cfg.InitialCluster = strings.Join(initial, ",")
		cfg.InitialClusterToken = "apictl-ha-test"
		cfg.TickMs, cfg.ElectionMs = 20, 200
		cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
		// The members wait for each other to form the cluster: start them together.
		wg.Go(func() {
			e, err := embed.StartEtcd(cfg)
			if err != nil {
				errs[i] = fmt.Errorf("starting etcd member %s: %w", cfg.Name, err)
				return
			}
			members[i] = e
			select {
			case <-e.Server.ReadyNotify():
			case <-time.After(30 * time.Second):
				errs[i] = fmt.Errorf("etcd member %s not ready", cfg.Name)
			}
		})
	}
	wg.Wait()
	t.Cleanup(func() {
		for _, e := range members {
			if e != nil {
				e.Close()
			}
		}
	})
	var urls []string
	for i := range n {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		urls = append(urls, fmt.Sprintf("http://127.0.0.1:%d", ports[2*i]))
	}
	return urls
}

// replica is one apictl serve of the cluster.
type replica struct {
	*process
	insecure int
	base     string
}

func (r *replica) get(t *testing.T, path string) (int, string) {
	t.Helper()
	code, body, err := get(&http.Client{Timeout: 5 * time.Second}, r.base+path)
	if err != nil {
		return 0, err.Error()
	}
	return code, body
}

// metric returns the value of one sample of /metrics ("name{labels}"), or "" when absent.
func (r *replica) metric(t *testing.T, sample string) string {
	t.Helper()
	_, body := r.get(t, "/metrics")
	for _, line := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(line, sample+" "); ok {
			return v
		}
	}
	return ""
}

// leases returns the Lease's holderIdentity as one replica serves it.
func (r *replica) holder(t *testing.T) string {
	t.Helper()
	return strings.TrimSpace(kubectl(t, "-s", r.base, "get", "lease", "-n", "kube-system", haLease, "-o", "jsonpath={.spec.holderIdentity}"))
}

// identityOf reads a replica's holderIdentity from its log line "campaigning for the lease".
var identityRE = regexp.MustCompile(`campaigning for the lease of the cluster-wide controllers.*identity=(\S+)`)

// TestThreeReplicasOneLeader is issue 16's "once per cluster": three replicas on a three-member etcd;
// exactly one holds the Lease and runs the cluster-wide controllers; etcd is compacted once per
// interval across all of them; after the holder is killed with SIGKILL another takes over within the
// lease duration plus the renew deadline and finishes the work left pending.
func TestThreeReplicasOneLeader(t *testing.T) {
	etcd := startEtcdCluster(t, 3)
	replicas := make([]*replica, 3)
	for i := range replicas {
		ports := freePorts(t, 2)
		p := startServe(t, "--etcd-servers", strings.Join(etcd, ","),
			"--secure-port", fmt.Sprint(ports[0]), "--insecure-port", fmt.Sprint(ports[1]), "--bind-address", "127.0.0.1",
			"--leader-elect-lease-duration", haLeaseDuration.String(), "--leader-elect-renew-deadline", haRenewDeadline.String(),
			"--leader-elect-retry-period", haRetryPeriod.String(), "--etcd-compaction-interval", haCompaction.String())
		replicas[i] = &replica{process: p, insecure: ports[1], base: fmt.Sprintf("http://127.0.0.1:%d", ports[1])}
	}
	for _, r := range replicas {
		waitReady(t, r.insecure)
	}
	identities := map[string]*replica{}
	for i, r := range replicas {
		waitFor(t, 5*time.Second, "the replica logs its identity", func() bool { return identityRE.MatchString(r.output.String()) })
		id := identityRE.FindStringSubmatch(r.output.String())[1]
		identities[id] = replicas[i]
	}

	// Exactly one holder, the same on every replica, and only its metrics say it runs the controllers.
	var leader *replica
	waitFor(t, 10*time.Second, "a replica holds the lease", func() bool {
		leader = identities[replicas[0].holder(t)]
		return leader != nil
	})
	holder := replicas[0].holder(t)
	table := kubectl(t, "-s", replicas[1].base, "get", "lease", "-n", "kube-system")
	if !regexp.MustCompile(`(?m)^` + haLease + `\s+` + regexp.QuoteMeta(holder) + `\s`).MatchString(table) {
		t.Errorf("kubectl get lease -n kube-system does not show %s held by %s:\n%s", haLease, holder, table)
	}
	checkRoles := func(leader *replica, alive []*replica) {
		t.Helper()
		for _, r := range alive {
			want := "0"
			if r == leader {
				want = "1"
			}
			waitFor(t, 5*time.Second, "the controller metrics settle", func() bool {
				return r.metric(t, `apictl_controller_running{controller="namespace-controller"}`) == want &&
					r.metric(t, `leader_election_master_status{name="`+haLease+`"}`) == want
			})
			for _, c := range []string{"clusterrole-aggregation-controller", "serviceaccount-controller", "crd-status-and-cleanup-controller",
				"apiservice-status-remote-available-controller", "garbage-collector-controller"} {
				if got := r.metric(t, `apictl_controller_running{controller="`+c+`"}`); got != want {
					t.Errorf("%s on %s: apictl_controller_running = %q, want %s", c, r.base, got, want)
				}
			}
			// Every replica is ready, leader or not, and says in /readyz?verbose whether it runs
			// the controllers; kube's leaderElection check is a liveness check and passes.
			says := "[+]cluster-controllers ok (runs no cluster-wide controllers"
			if want == "1" {
				says = "[+]cluster-controllers ok (runs: "
			}
			if code, body := r.get(t, "/readyz?verbose"); code != 200 || !strings.Contains(body, says) {
				t.Errorf("/readyz?verbose on %s does not say %q: %d\n%s", r.base, says, code, body)
			}
			if code, body := r.get(t, "/livez/leaderElection"); code != 200 {
				t.Errorf("/livez/leaderElection on %s: %d %s", r.base, code, body)
			}
		}
	}
	checkRoles(leader, replicas)

	// Compaction: the replicas take turns through compact_rev_key, so that the cluster is compacted
	// once per interval, not once per replica and interval.
	cli, err := clientv3.New(clientv3.Config{Endpoints: etcd, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	compactions := func() (version, revision int64) {
		resp, err := cli.Get(ctx, "/registry/compact_rev_key")
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Kvs) == 0 {
			return 0, resp.Header.Revision
		}
		return resp.Kvs[0].Version, resp.Header.Revision
	}
	v0, rev0 := compactions()
	window := 5 * haCompaction
	time.Sleep(window)
	v1, _ := compactions()
	// One round per interval, give or take the rounds at the edges of the window; three replicas
	// each compacting would make it three times as many.
	if rounds, most := v1-v0, int64(window/haCompaction)+1; rounds < 3 || rounds > most {
		t.Errorf("compact_rev_key went from version %d to %d in %v: %d rounds, want between 3 and %d (one per %v)", v0, v1, window, rounds, most, haCompaction)
	}
	if _, err := cli.Get(ctx, "/registry/compact_rev_key", clientv3.WithRev(rev0)); err == nil || !strings.Contains(err.Error(), "compacted") {
		t.Errorf("revision %d, %v old, is not compacted: %v", rev0, window, err)
	}

	// Work the controllers must finish after the holder dies: a namespace with content, deleted once
	// the holder is gone, so that only the next holder can finish it.
	var others []*replica
	for _, r := range replicas {
		if r != leader {
			others = append(others, r)
		}
	}
	k := func(args ...string) string { return kubectl(t, append([]string{"-s", others[0].base}, args...)...) }
	k("create", "namespace", "doomed")
	k("create", "configmap", "cm", "-n", "doomed", "--from-literal=a=b")
	// And an owner with dependents, deleted after the kill with --cascade=background: only the next
	// holder's garbage collector can collect them.
	k("create", "configmap", "owner")
	uid := strings.TrimSpace(k("get", "configmap", "owner", "-o", "jsonpath={.metadata.uid}"))
	var deps strings.Builder
	deps.WriteString("apiVersion: v1\nkind: List\nitems:\n")
	for i := range haDependents {
		fmt.Fprintf(&deps, "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: dep-%d\n    labels: {owner: owner}\n"+
			"    ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: owner, uid: %s}]\n", i, uid)
	}
	depsFile := filepath.Join(t.TempDir(), "dependents.yaml")
	writeFile(t, depsFile, deps.String())
	k("apply", "-f", depsFile)

	killed := time.Now()
	if err := leader.cmd.Process.Kill(); err != nil { // SIGKILL: the Lease is not released
		t.Fatal(err)
	}
	leader.wait(t, 10*time.Second)
	k("delete", "namespace", "doomed", "--wait=false")
	k("delete", "configmap", "owner", "--cascade=background")

	var next *replica
	waitFor(t, haLeaseDuration+haRenewDeadline+5*time.Second, "another replica holds the lease", func() bool {
		id := others[0].holder(t)
		next = identities[id]
		return next != nil && next != leader
	})
	took := time.Since(killed)
	if took > haLeaseDuration+haRenewDeadline {
		t.Errorf("the takeover took %v after the kill, want within the lease duration plus the renew deadline (%v)", took, haLeaseDuration+haRenewDeadline)
	}
	// A killed holder does not release the Lease: the others wait for it to expire (counted from
	// the last renewal each of them saw, up to a couple of retry periods before the kill), rather than
	// taking over within a retry period as after a graceful stop.
	if took < haLeaseDuration/2 {
		t.Errorf("the takeover took %v after a SIGKILL: the lease (%v) cannot have expired", took, haLeaseDuration)
	}
	t.Logf("takeover %v after SIGKILL (lease %v, renew deadline %v)", took.Round(10*time.Millisecond), haLeaseDuration, haRenewDeadline)
	checkRoles(next, others)

	// The new holder's namespace controller and garbage collector finish the work.
	waitFor(t, 10*time.Second, "the namespace deleted after the kill is gone", func() bool {
		code, _ := others[0].get(t, "/api/v1/namespaces/doomed")
		return code == http.StatusNotFound
	})
	waitFor(t, 10*time.Second, "the dependents of the owner deleted after the kill are collected", func() bool {
		return strings.TrimSpace(k("get", "configmaps", "-l", "owner=owner", "-o", "name")) == ""
	})
}

// TestRestartAfterCrashLeadsAtOnce: a server on its embedded etcd keeps its leader election identity
// in --data-dir, so after a SIGKILL the restarted server is the Lease's holder already and runs its
// controllers at once, not after the lease (15 s) of its previous life has expired.
func TestRestartAfterCrashLeadsAtOnce(t *testing.T) {
	dir := t.TempDir()
	start := func() (*replica, string) {
		ports := freePorts(t, 2)
		p := startServeIn(t, dir, "--secure-port", fmt.Sprint(ports[0]), "--insecure-port", fmt.Sprint(ports[1]), "--bind-address", "127.0.0.1")
		r := &replica{process: p, insecure: ports[1], base: fmt.Sprintf("http://127.0.0.1:%d", ports[1])}
		waitReady(t, r.insecure)
		waitFor(t, 5*time.Second, "the server logs its identity", func() bool { return identityRE.MatchString(r.output.String()) })
		return r, identityRE.FindStringSubmatch(r.output.String())[1]
	}
	leads := func(r *replica) bool {
		return r.metric(t, `leader_election_master_status{name="apictl-controllers"}`) == "1"
	}
	first, id := start()
	waitFor(t, 10*time.Second, "the server holds the lease", func() bool { return leads(first) })
	if err := first.cmd.Process.Kill(); err != nil { // SIGKILL: the Lease is not released
		t.Fatal(err)
	}
	first.wait(t, 10*time.Second)

	began := time.Now()
	again, idAgain := start()
	if idAgain != id {
		t.Errorf("the restarted server campaigns as %s, its previous life as %s: the identity should be kept in --data-dir", idAgain, id)
	}
	waitFor(t, 20*time.Second, "the restarted server holds the lease", func() bool { return leads(again) })
	if took := time.Since(began); took > 10*time.Second {
		t.Errorf("the restarted server led %v after it started: it waited for its own lease (15 s) to expire", took)
	}
}
