package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apictl/apictl/pkg/controllers/leases"
	"github.com/apictl/apictl/pkg/flags"
	"github.com/apictl/apictl/pkg/routes"
	"github.com/apictl/apictl/pkg/snapshot"
	"github.com/apictl/apictl/pkg/status"
	"github.com/apictl/apictl/pkg/storage/cacher"
	"github.com/apictl/apictl/pkg/storage/etcd3"
	"github.com/apictl/apictl/pkg/version"
)

// addStatusEndpoint serves `apictl status`'s report at /apictl/v1/status. It asks etcd through a
// client of its own, so that the store's connection keeps its one purpose, and closes it after the
// drain.
func (a *assembly) addStatusEndpoint() error {
	s, o, st, caches, cl := a.server, a.o, a.st, a.caches, a.cl
	v := version.Get()
	src := status.Source{
		Version: v.Apictl(), Kubernetes: v.Kubernetes(), Started: time.Now(),
		CertDir:   o.SecureServing.CertDir,
		Metrics:   s.Metrics(),
		Resources: caches.sizes,
		Watches:   caches.watches,
		Health: func(ctx context.Context, path string) (int, string, error) {
			u, err := url.Parse(path)
			if err != nil {
				return 0, "", err
			}
			req := cl.kube.Discovery().RESTClient().Get().AbsPath(u.Path)
			for k, vs := range u.Query() {
				req = req.Param(k, vs[0])
			}
			var code int
			body, _ := req.Do(ctx).StatusCode(&code).Raw() // a failing check is a 500 whose body is the answer
			if code == 0 {
				return 0, "", fmt.Errorf("no answer from %s", u.Path)
			}
			return code, string(body), nil
		},
	}
	src.Snapshots = &status.SnapshotSource{Disabled: true, Dir: snapshotDir(o)}
	if !o.Etcd.DisableSnapshots {
		sched, err := snapshot.ParseSchedule(o.Etcd.SnapshotScheduleCron)
		if err != nil {
			return fmt.Errorf("--etcd-snapshot-schedule-cron: %w", err)
		}
		src.Snapshots = &status.SnapshotSource{Spec: o.Etcd.SnapshotScheduleCron, Schedule: sched, Dir: snapshotDir(o)}
	}
	if le := o.LeaderElection; le.LeaderElect {
		src.LeaseName = le.ResourceNamespace + "/" + le.ResourceName
		src.Lease = func(ctx context.Context) (*coordinationv1.Lease, error) {
			return cl.kube.CoordinationV1().Leases(le.ResourceNamespace).Get(ctx, le.ResourceName, metav1.GetOptions{})
		}
		if len(o.Etcd.Servers) == 0 && o.Generic.DataDir != "" {
			// The embedded etcd's identity is kept in the data dir; an external etcd's is the
			// process's own, which only the leader election knows.
			if id, err := leaseIdentity(o); err == nil {
				src.Identity = id
			}
		}
	}
	etcdClient, err := statusEtcdClient(o, st)
	if err != nil {
		return err
	}
	src.Etcd = &status.EtcdSource{Client: etcdClient, Endpoints: etcdClient.Endpoints(), Embedded: st.embedded != nil,
		LocalOnly: st.embedded != nil, PeerActive: activePeer}
	if err := a.addReplicaLeases(&src, etcdClient); err != nil {
		return err
	}
	return errors.Join(
		s.ServeEndpoint(routes.EndpointStatus, status.NewGatherer(src)),
		s.AddPostShutdownHook("close-status-etcd-client", func(context.Context) error { return etcdClient.Close() }),
	)
}

// statusEtcdClient is a client of the embedded etcd's member, or of the --etcd-servers.
func statusEtcdClient(o *flags.ServerOptions, st *storageStack) (*clientv3.Client, error) {
	endpoints := o.Etcd.Servers
	caFile, certFile, keyFile := o.Etcd.CAFile, o.Etcd.CertFile, o.Etcd.KeyFile
	if st.embedded != nil {
		endpoints = st.embedded.ClientURLs()
		creds, _ := st.embedded.ClientCredentials()
		caFile, certFile, keyFile = creds.CAFile, creds.CertFile, creds.KeyFile
	}
	tlsConfig, err := etcd3.ClientTLS(endpoints, caFile, certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("the status endpoint's etcd client: %w", err)
	}
	// No dial blocks here: a member that is down is reported by the requests, not the start.
	c, err := clientv3.New(clientv3.Config{Endpoints: endpoints, TLS: tlsConfig, DialTimeout: time.Second, Logger: zap.NewNop()})
	if err != nil {
		return nil, fmt.Errorf("the status endpoint's etcd client: %w", err)
	}
	return c, nil
}

// activePeer reads etcd's own etcd_network_active_peers gauge, which its raft transport keeps
// in the process's default registry: whether local has a live connection to remote.
func activePeer(local, remote uint64) (active, known bool) {
	families, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		return false, false
	}
	l, r := strconv.FormatUint(local, 16), strconv.FormatUint(remote, 16)
	for _, f := range families {
		if f.GetName() != "etcd_network_active_peers" {
			continue
		}
		for _, m := range f.GetMetric() {
			var ml, mr string
			for _, p := range m.GetLabel() {
				switch p.GetName() {
				case "Local":
					ml = p.GetValue()
				case "Remote":
					mr = p.GetValue()
				}
			}
			if ml == l && mr == r {
				return m.GetGauge().GetValue() > 0, true
			}
		}
		// The transport made no gauge for the pair: it never connected.
		return false, true
	}
	return false, false
}

// sizes reports the stored resources' object counts and bytes as their watch caches hold them:
// counters kept as events arrive, read in constant time per resource.
func (w *watchCaches) sizes() (groups, resources int, out []status.ResourceSize) {
	seen := map[string]bool{}
	add := func(gr schema.GroupResource, c *cacher.Cacher) {
		st := c.Stats()
		seen[gr.Group] = true
		out = append(out, status.ResourceSize{Resource: gr.String(), Objects: int64(st.Objects), Bytes: st.Bytes})
	}
	for gr, s := range w.byResource {
		if c, ok := s.(*cacher.Cacher); ok {
			add(gr, c)
		}
	}
	if custom := w.custom.Load(); custom != nil {
		for gr, c := range (*custom)() {
			add(gr, c)
		}
	}
	return len(seen), len(out), out
}

// watches counts the watches the watch caches serve.
func (w *watchCaches) watches() int64 {
	var n int64
	for _, c := range w.all {
		n += int64(c.Stats().Watchers)
	}
	if custom := w.custom.Load(); custom != nil {
		for _, c := range (*custom)() {
			n += int64(c.Stats().Watchers)
		}
	}
	return n
}

// addReplicaLeases keeps this replica's identity Lease and, on an embedded etcd, its member Lease
// (pkg/controllers/leases), and lets the status read every replica's from an informer: the servers,
// and the sizes and raft index of the members this one cannot ask.
func (a *assembly) addReplicaLeases(src *status.Source, etcdClient *clientv3.Client) error {
	if !servesV1(a.cfg.API, "coordination.k8s.io", "leases") {
		return nil
	}
	lister := a.cl.informers.Coordination().V1().Leases().Lister()
	cfg := leases.Config{Client: a.cl.kube, Leases: lister, Logger: a.cfg.Logger.With("component", "replica-leases")}
	src.Servers = func(now time.Time) []string { return leases.Identities(lister, now) }
	if e := a.st.embedded; e != nil {
		endpoint := etcdClient.Endpoints()[0]
		cfg.MemberID = e.MemberID()
		cfg.Status = func(ctx context.Context) (leases.MemberStatus, error) {
			ctx, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			st, err := etcdClient.Status(ctx, endpoint)
			if err != nil {
				return leases.MemberStatus{}, err
			}
			return leases.MemberStatus{DBSize: st.DbSize, DBInUse: st.DbSizeInUse, RaftTerm: st.RaftTerm, RaftIndex: st.RaftIndex}, nil
		}
		src.Etcd.Reported = func(now time.Time) map[uint64]status.ReportedStatus {
			out := map[uint64]status.ReportedStatus{}
			for id, m := range leases.Members(lister, now) {
				out[id] = status.ReportedStatus{DBSize: m.DBSize, DBInUse: m.DBInUse, RaftTerm: m.RaftTerm, RaftIndex: m.RaftIndex, At: m.Reported}
			}
			return out
		}
	}
	bg := &a.bg
	return a.server.AddPostStartHook("start-kube-apiserver-identity-lease-controller", func(ctx context.Context) error {
		bg.goRun(func() {
			if err := leases.Run(ctx, cfg); err != nil {
				cfg.Logger.Error("keeping this replica's Leases", "err", err)
			}
		})
		return nil
	})
}
