package snapshot

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/robfig/cron/v3"
)

// ScheduledPrefix starts the names of the snapshots a Scheduler takes; its pruning keeps to them,
// leaving on-demand snapshots to their owners.
const ScheduledPrefix = "scheduled-"

// ParseSchedule parses a cron schedule as k3s's --etcd-snapshot-schedule-cron takes it: five
// fields (minute hour day-of-month month day-of-week) or a descriptor such as @hourly or
// @every 30m.
func ParseSchedule(spec string) (cron.Schedule, error) {
	s, err := cron.ParseStandard(spec)
	if err != nil {
		return nil, fmt.Errorf("%q is not a cron schedule (five fields, like \"0 */12 * * *\", or @every 6h): %w", spec, err)
	}
	return s, nil
}

// SchedulerConfig says when and where a Scheduler takes snapshots.
type SchedulerConfig struct {
	Schedule  cron.Schedule
	Retention int
	Dir       string
	// Source is the etcd, as Connect takes it.
	Source Source
	// CertDir is the server's cert dir, whose CAs and keys are saved with each snapshot.
	CertDir string
	// Host goes into the snapshots' names.
	Host                             string
	ApictlVersion, KubernetesVersion string
	Registerer                       prometheus.Registerer
	Logger                           *slog.Logger
}

// Scheduler takes snapshots on a schedule and prunes the scheduled ones down to the retention.
type Scheduler struct {
	cfg     SchedulerConfig
	last    *prometheus.GaugeVec
	total   *prometheus.CounterVec
	now     func() time.Time
	waitFor func(ctx context.Context, d time.Duration) bool
}

// NewScheduler registers the scheduler's metrics: apictl_etcd_snapshot_last_timestamp_seconds and
// apictl_etcd_snapshots_total, each by result (success, failure).
func NewScheduler(cfg SchedulerConfig) (*Scheduler, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Scheduler{
		cfg: cfg,
		last: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "apictl_etcd_snapshot_last_timestamp_seconds",
			Help: "When the last scheduled etcd snapshot succeeded, or failed, in seconds since the epoch."}, []string{"result"}),
		total: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "apictl_etcd_snapshots_total",
			Help: "Scheduled etcd snapshots taken by this server, by result."}, []string{"result"}),
		now:     time.Now,
		waitFor: sleep,
	}
	if cfg.Registerer != nil {
		for _, c := range []prometheus.Collector{s.last, s.total} {
			if err := cfg.Registerer.Register(c); err != nil {
				return nil, fmt.Errorf("registering the snapshot metrics: %w", err)
			}
		}
	}
	return s, nil
}

// Run takes a snapshot at every time of the schedule until ctx ends. It may be run again after it
// returned (a replica that wins the controllers' Lease back).
func (s *Scheduler) Run(ctx context.Context) {
	for {
		now := s.now()
		next := s.cfg.Schedule.Next(now)
		if !s.waitFor(ctx, next.Sub(now)) {
			return
		}
		if err := s.Take(ctx, next); err != nil && ctx.Err() == nil {
			s.cfg.Logger.Error("scheduled etcd snapshot failed", "err", err)
		}
	}
}

// Take saves one scheduled snapshot named for at and prunes the scheduled snapshots to the retention.
func (s *Scheduler) Take(ctx context.Context, at time.Time) error {
	err := s.take(ctx, at)
	result := "success"
	if err != nil {
		result = "failure"
	}
	s.last.WithLabelValues(result).Set(float64(s.now().Unix()))
	s.total.WithLabelValues(result).Inc()
	return err
}

func (s *Scheduler) take(ctx context.Context, at time.Time) error {
	cl, closeClient, err := Connect(ctx, s.cfg.Source)
	if err != nil {
		return err
	}
	name := ScheduledPrefix + s.cfg.Host + "-" + at.UTC().Format("20060102T150405Z")
	info, err := Save(ctx, cl.Maintenance, SaveOptions{Dir: s.cfg.Dir, Name: name, Endpoint: cl.Endpoints()[0], Now: s.now, CertDir: s.cfg.CertDir,
		ApictlVersion: s.cfg.ApictlVersion, KubernetesVersion: s.cfg.KubernetesVersion})
	if cerr := closeClient(context.WithoutCancel(ctx)); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	s.cfg.Logger.Info("scheduled etcd snapshot saved", "name", info.Name, "dir", s.cfg.Dir, "revision", info.Revision, "size", info.Size)
	deleted, err := Prune(s.cfg.Dir, ScheduledPrefix, s.cfg.Retention)
	for _, d := range deleted {
		s.cfg.Logger.Info("scheduled etcd snapshot pruned", "name", d.Name)
	}
	return err
}

// sleep waits d, and reports false if ctx ended first.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
