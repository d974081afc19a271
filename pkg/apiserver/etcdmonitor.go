package apiserver

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// etcdProbeInterval is how often the monitor asks etcd whether it answers: an outage is in the log
// within this long, even when no client is asking.
const etcdProbeInterval = 2 * time.Second

// etcdMonitor probes etcd and logs each change between reachable and not once, with how long the
// outage lasted, so that an outage is in the server's log and not only in /readyz and clients'
// errors. It exports the state as metrics.
type etcdMonitor struct {
	check    func(context.Context) error
	log      *slog.Logger
	interval time.Duration
	now      func() time.Time

	up      prometheus.Gauge
	outages prometheus.Counter
}

func newEtcdMonitor(check func(context.Context) error, log *slog.Logger) *etcdMonitor {
	return &etcdMonitor{
		check: check, log: log.With("component", "etcd-monitor"), interval: etcdProbeInterval, now: time.Now,
		up: prometheus.NewGauge(prometheus.GaugeOpts{Name: "apictl_etcd_up",
			Help: "1 when the last probe of etcd got an answer, 0 when it did not."}),
		outages: prometheus.NewCounter(prometheus.CounterOpts{Name: "apictl_etcd_outages_total",
			Help: "Number of times etcd stopped answering the server's probes."}),
	}
}

func (m *etcdMonitor) register(reg prometheus.Registerer) error {
	if err := reg.Register(m.up); err != nil {
		return err
	}
	return reg.Register(m.outages)
}

// run probes until ctx ends. The server started on a reachable etcd, so it begins up.
func (m *etcdMonitor) run(ctx context.Context) {
	m.up.Set(1)
	var downSince time.Time
	t := time.NewTicker(m.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		err := m.check(ctx)
		if ctx.Err() != nil {
			return
		}
		switch {
		case err != nil && downSince.IsZero():
			downSince = m.now()
			m.up.Set(0)
			m.outages.Inc()
			m.log.Error("etcd does not answer; requests that need it fail until it is back", "err", err)
		case err == nil && !downSince.IsZero():
			m.up.Set(1)
			m.log.Info("etcd answers again", "downFor", m.now().Sub(downSince).Round(time.Millisecond))
			downSince = time.Time{}
		}
	}
}
