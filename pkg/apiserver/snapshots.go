package apiserver

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/apictl/apictl/pkg/flags"
	"github.com/apictl/apictl/pkg/snapshot"
	"github.com/apictl/apictl/pkg/version"
)

// addEtcdSnapshots registers the scheduled snapshots of etcd with the cluster-wide controllers, so
// that one replica takes them however many run: the embedded etcd through the URL and credentials it
// keeps in the data dir, or the external cluster with serve's own --etcd-* files.
func (a *assembly) addEtcdSnapshots() error {
	s, cfg, o, ctrls := a.server, a.cfg, a.o, &a.ctrls
	if o.Etcd.DisableSnapshots {
		return nil
	}
	schedule, err := snapshot.ParseSchedule(o.Etcd.SnapshotScheduleCron)
	if err != nil {
		return fmt.Errorf("--etcd-snapshot-schedule-cron: %w", err)
	}
	dir := snapshotDir(o)
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "apictl"
	}
	v := version.Get()
	sched, err := snapshot.NewScheduler(snapshot.SchedulerConfig{
		Schedule: schedule, Retention: o.Etcd.SnapshotRetention, Dir: dir, Host: host,
		Source: snapshot.Source{DataDir: o.Generic.DataDir, Endpoints: o.Etcd.Servers,
			CAFile: o.Etcd.CAFile, CertFile: o.Etcd.CertFile, KeyFile: o.Etcd.KeyFile, Timeout: o.Etcd.HealthcheckTimeout},
		ApictlVersion: v.Apictl(), KubernetesVersion: v.Kubernetes(), CertDir: o.SecureServing.CertDir,
		Registerer: s.Registry(), Logger: cfg.Logger.With("component", "etcd-snapshots"),
	})
	if err != nil {
		return err
	}
	ctrls.add("etcd-snapshot-controller", sched.Run)
	return nil
}

// snapshotDir is where the scheduled snapshots go: --etcd-snapshot-dir, or <data-dir>/snapshots.
func snapshotDir(o *flags.ServerOptions) string {
	if o.Etcd.SnapshotDir != "" {
		return o.Etcd.SnapshotDir
	}
	return filepath.Join(o.Generic.DataDir, "snapshots")
}
