package flags

import (
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/apictl/apictl/pkg/snapshot"
)

// EtcdOptions say where objects are stored: an embedded etcd in the data dir, or an external cluster.
type EtcdOptions struct {
	// Servers are the client URLs of an external etcd cluster. Empty means an embedded etcd.
	Servers []string
	// Prefix is prepended to every key apictl writes, so several servers can share a cluster.
	Prefix string
	// CAFile, CertFile and KeyFile secure the connection to an external cluster.
	CAFile, CertFile, KeyFile string
	// CompactionInterval is how often old revisions are compacted (0: never).
	CompactionInterval time.Duration
	// HealthcheckTimeout bounds the etcd health check.
	HealthcheckTimeout time.Duration
	// QuotaBackendBytes is the embedded etcd's database quota (0: etcd's default, 2 GiB).
	QuotaBackendBytes int64
	// Scheduled snapshots, as k3s takes them of its embedded etcd: SnapshotScheduleCron says when
	// (cron), SnapshotRetention how many scheduled ones are kept, SnapshotDir where (empty:
	// <data-dir>/snapshots); DisableSnapshots turns them off. Taken once per cluster, by the replica
	// that runs the cluster-wide controllers.
	SnapshotScheduleCron string
	SnapshotRetention    int
	SnapshotDir          string
	DisableSnapshots     bool
	// Cluster makes the embedded etcd a member of a cluster of apictl servers.
	Cluster EmbeddedClusterOptions
}

// NewEtcdOptions returns kube's defaults.
func NewEtcdOptions() *EtcdOptions {
	return &EtcdOptions{
		Prefix:             "/registry",
		CompactionInterval: 5 * time.Minute,
		HealthcheckTimeout: 2 * time.Second,
		// k3s's defaults: twice a day, five kept.
		SnapshotScheduleCron: "0 */12 * * *",
		SnapshotRetention:    5,
		Cluster:              EmbeddedClusterOptions{PeerPort: DefaultEtcdPeerPort},
	}
}

// AddFlags registers the etcd flags with the current values as defaults.
func (o *EtcdOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringSliceVar(&o.Servers, "etcd-servers", o.Servers,
		"List of etcd servers to connect with (scheme://ip:port), comma separated. If empty, an embedded etcd is started in <data-dir>/etcd.")
	fs.StringVar(&o.Prefix, "etcd-prefix", o.Prefix, "The prefix to prepend to all resource paths in etcd.")
	fs.StringVar(&o.CAFile, "etcd-cafile", o.CAFile, "SSL Certificate Authority file used to secure etcd communication.")
	fs.StringVar(&o.CertFile, "etcd-certfile", o.CertFile, "SSL certification file used to secure etcd communication.")
	fs.StringVar(&o.KeyFile, "etcd-keyfile", o.KeyFile, "SSL key file used to secure etcd communication.")
	fs.DurationVar(&o.CompactionInterval, "etcd-compaction-interval", o.CompactionInterval,
		"The interval of compaction requests. If 0, compaction requests from the apiserver are disabled.")
	fs.DurationVar(&o.HealthcheckTimeout, "etcd-healthcheck-timeout", o.HealthcheckTimeout,
		"The timeout to use when checking etcd health.")
	fs.StringVar(&o.SnapshotScheduleCron, "etcd-snapshot-schedule-cron", o.SnapshotScheduleCron,
		"When to take scheduled snapshots of etcd, in cron format (minute hour day-of-month month day-of-week, or @every 6h). Taken once per cluster, by the replica running the cluster-wide controllers (see --leader-elect).")
	fs.IntVar(&o.SnapshotRetention, "etcd-snapshot-retention", o.SnapshotRetention, "How many scheduled snapshots to keep; older ones are deleted.")
	fs.StringVar(&o.SnapshotDir, "etcd-snapshot-dir", o.SnapshotDir, "Where scheduled snapshots go (default <data-dir>/snapshots). apictl snapshot ls --dir lists them.")
	fs.BoolVar(&o.DisableSnapshots, "etcd-disable-snapshots", o.DisableSnapshots, "Take no scheduled snapshots.")
	fs.Int64Var(&o.QuotaBackendBytes, "etcd-quota-backend-bytes", o.QuotaBackendBytes,
		"The size in bytes the embedded etcd's database may reach before etcd refuses writes (its NOSPACE alarm; apictl then compacts, defragments and disarms it once deletes made room). 0 means etcd's default, 2 GiB. An external cluster sets its own --quota-backend-bytes.")
	o.addClusterFlags(fs)
}

// Complete has nothing to fill in: an empty server list deliberately means the embedded etcd.
func (o *EtcdOptions) Complete() error { return nil }

// Validate reports every problem with the etcd settings.
func (o *EtcdOptions) Validate() []error {
	const s = SectionEtcd
	var errs problemList
	for _, server := range o.Servers {
		u, err := url.Parse(server)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs.add(problemf(s, "etcd-servers", server, "must be an http:// or https:// URL with a host, like https://10.0.0.1:2379"))
		}
	}
	if o.Prefix == "" || !strings.HasPrefix(o.Prefix, "/") {
		errs.add(problemf(s, "etcd-prefix", o.Prefix, "must start with /, like /registry"))
	}
	if (o.CertFile == "") != (o.KeyFile == "") {
		errs.add(problemf(s, "etcd-certfile", o.CertFile, "and --etcd-keyfile must be given together: the client certificate needs its key"))
	}
	if len(o.Servers) == 0 && (o.CAFile != "" || o.CertFile != "" || o.KeyFile != "") {
		errs.add(problemf(s, "etcd-servers", "", "must be given with --etcd-cafile, --etcd-certfile or --etcd-keyfile: the embedded etcd does not use them"))
	}
	errs.add(checkReadableFile(s, "etcd-cafile", o.CAFile))
	errs.add(checkReadableFile(s, "etcd-certfile", o.CertFile))
	errs.add(checkReadableFile(s, "etcd-keyfile", o.KeyFile))
	errs.add(checkNotNegative(s, "etcd-compaction-interval", o.CompactionInterval))
	errs.add(checkPositive(s, "etcd-healthcheck-timeout", o.HealthcheckTimeout))
	errs.add(checkNotNegativeInt(s, "etcd-quota-backend-bytes", o.QuotaBackendBytes, "etcd's default of 2 GiB"))
	if !o.DisableSnapshots {
		if _, err := snapshot.ParseSchedule(o.SnapshotScheduleCron); err != nil {
			errs.add(problemf(s, "etcd-snapshot-schedule-cron", o.SnapshotScheduleCron, "must be a cron schedule with five fields, like \"0 */12 * * *\", or a descriptor like @every 6h (or set --etcd-disable-snapshots)"))
		}
		if o.SnapshotRetention < 1 {
			errs.add(problemf(s, "etcd-snapshot-retention", strconv.Itoa(o.SnapshotRetention), "must keep at least 1 snapshot (or set --etcd-disable-snapshots)"))
		}
	}
	if len(o.Servers) > 0 && o.QuotaBackendBytes != 0 {
		errs.add(problemf(s, "etcd-quota-backend-bytes", strconv.FormatInt(o.QuotaBackendBytes, 10),
			"applies to the embedded etcd only: set --quota-backend-bytes on the members of the cluster in --etcd-servers"))
	}
	o.validateCluster(&errs)
	return errs
}
