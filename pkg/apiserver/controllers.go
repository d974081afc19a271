package apiserver

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"

	googleuuid "github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/apictl/apictl/pkg/controllers/leaderelection"
	"github.com/apictl/apictl/pkg/flags"
	"github.com/apictl/apictl/pkg/storage/embedded"
)

// clusterControllers are the controllers that run once per cluster: with --leader-elect (the
// default) only on the replica that holds the coordination.k8s.io/v1 Lease
// --leader-elect-resource-namespace/--leader-elect-resource-name (kube-system/apictl-controllers),
// always with --leader-elect=false. Per-replica work (watch caches, serving, health, the API state that
// CRDs and APIServices add, the RBAC authorizer's index, compaction's compare-and-swap turns) does
// not belong here.
//
// The contract, for every addX function that registers one:
//
//	ctrls.add(name, run) // while New builds the server
//
// run blocks until its ctx ends. Losing the Lease cancels ctx and waits for run to return; winning
// it again calls run again with a fresh ctx. So a controller builds its state inside run (queues,
// informer event handlers, maps) and keeps nothing between runs; informers and watch caches shared
// with per-replica work stay outside and keep running.
//
// What runs where shows in /metrics: apictl_controller_running{controller="..."} is 1 on the replica
// that runs it and 0 on the others, and leader_election_master_status{name="<lease>"} (kube's
// metric) is 1 on the Lease's holder; /readyz?verbose says it too, in its cluster-controllers line.
// /livez and /healthz have kube's leaderElection check (a leader that could not renew in time). The holder is the Lease's spec.holderIdentity: `kubectl get lease -n kube-system`.
type clusterControllers struct {
	group leaderelection.Group
	// enabled says whether --controllers lets a controller run; nil runs them all.
	enabled func(name string) bool
	// unknown are names registered that --controllers cannot name: a programming error that
	// addClusterControllers reports, so that the flag's list of names cannot drift.
	unknown []string
}

// add registers a controller that runs once per cluster (see clusterControllers), unless
// --controllers leaves it out.
func (c *clusterControllers) add(name string, run func(ctx context.Context)) {
	if !slices.Contains(flags.ControllerNames, name) {
		c.unknown = append(c.unknown, name)
		return
	}
	if c.enabled != nil && !c.enabled(name) {
		return
	}
	c.group.Add(name, run)
}

// identityFile keeps, in --data-dir, the leader election identity of a server on the embedded etcd.
const identityFile = "leader-election-identity"

// leaseIdentity is this process's holderIdentity, as kube's components make it: the host name, an
// underscore and a UUID. On an external etcd the UUID is new per process, so that a restarted replica
// is a new candidate. On the embedded etcd, which only the process that holds --data-dir can open, it
// is kept in the data dir: a server restarted after a crash is then the Lease's holder already and
// runs its controllers at once, instead of waiting out the lease of its own previous life.
func leaseIdentity(o *flags.ServerOptions) (string, error) {
	host, err := os.Hostname()
	if err != nil {
		return "", fmt.Errorf("reading the host name for the leader election identity: %w", err)
	}
	if len(o.Etcd.Servers) > 0 || o.Generic.DataDir == "" {
		return host + "_" + googleuuid.NewString(), nil
	}
	id, err := dataDirIdentity(filepath.Join(o.Generic.DataDir, identityFile))
	if err != nil {
		return "", err
	}
	return host + "_" + id, nil
}

// dataDirIdentity reads the UUID in path, or writes a new one there (atomically) the first time.
func dataDirIdentity(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		id := strings.TrimSpace(string(b))
		if _, perr := googleuuid.Parse(id); perr != nil {
			return "", fmt.Errorf("reading the leader election identity from %s: %q is not a UUID; delete the file and a new one is made", path, id)
		}
		return id, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("reading the leader election identity: %w", err)
	}
	id := googleuuid.NewString()
	tmp, err := os.CreateTemp(filepath.Dir(path), identityFile+".*")
	if err != nil {
		return "", fmt.Errorf("writing the leader election identity: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.WriteString(id + "\n")
	if err := errors.Join(werr, tmp.Sync(), tmp.Close(), os.Rename(tmp.Name(), path)); err != nil {
		return "", fmt.Errorf("writing the leader election identity to %s: %w", path, err)
	}
	return id, nil
}

// addClusterControllers runs the registered controllers: under the Lease when --leader-elect is on,
// else always. It adds kube's leaderElection liveness check and the check and metrics that say which
// controllers this replica runs. ensureNamespaces creates the default namespaces (kube-system among
// them) if they are missing, so that the first campaign of a new cluster does not fail for want of
// the Lease's namespace. Shutdown stops the controllers, then releases the Lease, so that another
// replica takes over at once.
func (a *assembly) addClusterControllers() error {
	s, cfg, o, cl, ctrls, ensureNamespaces, bg := a.server, a.cfg, a.o, a.cl, &a.ctrls, a.rest.EnsureDefaultNamespaces, &a.bg
	if len(ctrls.unknown) > 0 {
		return fmt.Errorf("controllers %v are missing from flags.ControllerNames, which --controllers selects from", ctrls.unknown)
	}
	running := &runningCollector{group: &ctrls.group, desc: prometheus.NewDesc("apictl_controller_running",
		"Whether this replica runs the cluster-wide controller (1) or another replica does (0): they run on the holder of the leader election Lease.",
		[]string{"controller"}, nil)}
	if err := s.Registry().Register(running); err != nil {
		return fmt.Errorf("registering the controller metrics: %w", err)
	}
	le := o.LeaderElection
	if !le.LeaderElect {
		if err := s.AddReadyzChecks(runningCheck{group: &ctrls.group}); err != nil {
			return err
		}
		return s.AddPostStartHook("start-cluster-controllers", func(ctx context.Context) error {
			bg.goRun(func() { ctrls.group.Run(ctx) })
			return nil
		})
	}
	if !servesV1(cfg.API, "coordination.k8s.io", "leases") {
		return errors.New("--leader-elect needs the coordination.k8s.io/v1 API, which serves the Lease: do not turn it off in --runtime-config, or pass --leader-elect=false")
	}
	id, err := leaseIdentity(o)
	if err != nil {
		return err
	}
	// kube's gauge (client-go's leader metric, which kube-controller-manager registers globally):
	// here on the server's own registry.
	master := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "leader_election_master_status",
		Help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.",
	}, []string{"name"})
	leading := master.WithLabelValues(le.ResourceName)
	if err := s.Registry().Register(master); err != nil {
		return fmt.Errorf("registering the leader election metric: %w", err)
	}
	log := cfg.Logger.With("component", "leader-election")
	elector, err := leaderelection.New(leaderelection.Config{
		Client:        cl.kube.CoordinationV1(),
		Namespace:     le.ResourceNamespace,
		Name:          le.ResourceName,
		Identity:      id,
		LeaseDuration: le.LeaseDuration,
		RenewDeadline: le.RenewDeadline,
		RetryPeriod:   le.RetryPeriod,
		Logger:        log,
		// kube-controller-manager's "<identity> became leader" events on the Lease, from apictl.
		Events:    cl.kube.CoreV1(),
		Component: "apictl",
		OnLeading: func(on bool) {
			if on {
				leading.Set(1)
				// Debug level: the election runs beside the start, and this line would as often as
				// not come after its last line, the admin kubeconfig's hint. Which replica leads is
				// in the Lease, its events and /readyz?verbose; losing the lease is logged at Info.
				log.Debug("this replica holds the lease: starting the cluster-wide controllers", "controllers", ctrls.group.Names())
				return
			}
			leading.Set(0)
			log.Info("the cluster-wide controllers stopped")
		},
	})
	if err != nil {
		return err
	}
	// kube-controller-manager's leaderElection check fails a leader that has not renewed for long
	// (its controllers stuck): a restart mends that, and the API serves meanwhile, so it is a
	// liveness check here, not a readiness one.
	if err := errors.Join(s.AddLivezChecks(elector),
		s.AddReadyzChecks(runningCheck{group: &ctrls.group, lease: elector.Describe()})); err != nil {
		return err
	}
	return s.AddPostStartHook("start-cluster-controllers", func(ctx context.Context) error {
		if ensureNamespaces != nil {
			if err := ensureNamespaces(ctx); err != nil {
				return fmt.Errorf("creating the leader election Lease's namespace: %w", err)
			}
		}
		releaseRestoredLease(ctx, o, elector, log)
		log.Info("campaigning for the lease of the cluster-wide controllers", "lease", elector.Describe(), "identity", elector.Identity())
		bg.goRun(func() { elector.Run(ctx, ctrls.group.Run) })
		return nil
	})
}

// runningCollector reports apictl_controller_running for every registered controller when /metrics
// is scraped.
type runningCollector struct {
	group *leaderelection.Group
	desc  *prometheus.Desc
}

func (c *runningCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *runningCollector) Collect(ch chan<- prometheus.Metric) {
	for _, name := range c.group.Names() {
		v := 0.0
		if c.group.Running(name) {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, v, name)
	}
}

// runningCheck is the readiness check "cluster-controllers": it always passes (a replica that runs
// no controller serves as well as one that runs them all), and in /readyz?verbose it says which
// cluster-wide controllers this replica runs: "[+]cluster-controllers ok (runs: namespace-controller,
// ...)". lease names the Lease whose holder runs them, "" without leader election.
type runningCheck struct {
	group *leaderelection.Group
	lease string
}

func (c runningCheck) Name() string              { return "cluster-controllers" }
func (c runningCheck) Check(*http.Request) error { return nil }

// Detail names the controllers running here, or says that another replica runs them.
func (c runningCheck) Detail() string {
	var running []string
	for _, name := range c.group.Names() {
		if c.group.Running(name) {
			running = append(running, name)
		}
	}
	switch {
	case len(running) > 0:
		return "runs: " + strings.Join(running, ", ")
	case c.lease != "":
		return "runs no cluster-wide controllers: the holder of Lease " + c.lease + " does"
	default:
		return "runs no cluster-wide controllers"
	}
}

// releaseRestoredLease releases the Lease restored from a snapshot into the embedded etcd when it
// names the server the snapshot was saved from, which never runs on this data: this server then runs
// the controllers as soon as it serves, rather than a lease duration later. A Lease renewed since
// the restore belongs to a server on this data and is left alone; failing to release is only slower.
func releaseRestoredLease(ctx context.Context, o *flags.ServerOptions, elector *leaderelection.Elector, log *slog.Logger) {
	if len(o.Etcd.Servers) > 0 || o.Generic.DataDir == "" {
		return
	}
	at, ok := embedded.RestoredAt(filepath.Join(o.Generic.DataDir, "etcd"))
	if !ok {
		return
	}
	holder, err := elector.ReleaseRenewedBefore(ctx, at)
	switch {
	case err != nil:
		log.Warn("the lease restored from a snapshot could not be released: the controllers start once it expires", "err", err)
	case holder != "":
		log.Info("released the lease restored from a snapshot: its holder ran on the data the snapshot was saved from", "holder", holder, "restoredAt", at)
	}
}
