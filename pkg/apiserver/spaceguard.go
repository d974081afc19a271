package apiserver

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/apictl/apictl/pkg/serve/healthz"
	"github.com/apictl/apictl/pkg/storage"
	"github.com/apictl/apictl/pkg/storage/embedded"
	"github.com/apictl/apictl/pkg/storage/etcd3"
)

const (
	// spaceCheckInterval is how often the guard reads the free space: between two reads, writes
	// can use at most a fraction of the reserve.
	spaceCheckInterval = time.Second
	// recoverInterval is the shortest time between two attempts to recover from etcd's NOSPACE
	// alarm: each compacts and defragments, which blocks etcd for a moment.
	recoverInterval = 10 * time.Second
	// defaultQuotaBackendBytes is etcd's own default quota, for judging recovery.
	defaultQuotaBackendBytes = 2 << 30
)

// spaceGuard keeps the embedded etcd from running out of disk, which would make it panic and take the
// process down: below embedded.ReserveFreeBytes free it refuses writes (the store's WriteGate), while
// reads, watches and deletes go on, and it lets writes through again once there is room. When etcd
// raises its NOSPACE alarm (the database reached --etcd-quota-backend-bytes) it compacts, defragments
// and disarms the alarm once deletes have made room. /readyz names the reason meanwhile.
type spaceGuard struct {
	etcd  *embedded.Server
	store *etcd3.Store // set once the store exists
	quota int64
	log   *slog.Logger

	// refused is why writes are refused now; nil when they are not.
	refused atomic.Pointer[error]
	// alarm is etcd's NOSPACE alarm as last seen.
	alarm atomic.Pointer[error]
	free  prometheus.Gauge
}

func newSpaceGuard(srv *embedded.Server, quota int64, log *slog.Logger) *spaceGuard {
	if quota <= 0 {
		quota = defaultQuotaBackendBytes
	}
	return &spaceGuard{etcd: srv, quota: quota, log: log.With("component", "etcd-space"),
		free: prometheus.NewGauge(prometheus.GaugeOpts{Name: "apictl_etcd_disk_free_bytes",
			Help: "Free space on the filesystem of the embedded etcd's data directory."})}
}

// gate is the store's WriteGate: it answers from memory.
func (g *spaceGuard) gate() error {
	if err := g.refused.Load(); err != nil {
		return &storage.StorageError{Code: storage.NoSpace, Op: "write", Err: *err}
	}
	return nil
}

// check is the readyz check: failing while writes are refused, saying why.
func (g *spaceGuard) check(*http.Request) error {
	if err := g.refused.Load(); err != nil {
		return *err
	}
	if err := g.alarm.Load(); err != nil {
		return *err
	}
	return nil
}

// run watches the space until ctx ends.
func (g *spaceGuard) run(ctx context.Context) {
	t := time.NewTicker(spaceCheckInterval)
	defer t.Stop()
	var lastRecover time.Time
	for {
		g.checkSpace()
		if g.store != nil {
			g.checkAlarm(ctx, &lastRecover)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (g *spaceGuard) checkSpace() {
	sp := g.etcd.Space()
	if !sp.Known {
		return
	}
	g.free.Set(float64(sp.Free))
	err := sp.Error()
	was := g.refused.Load() != nil
	switch {
	case err != nil && !was:
		g.refused.Store(&err)
		g.log.Error("refusing writes to keep etcd from running out of disk", "err", err)
	case err == nil && was:
		g.refused.Store(nil)
		g.log.Info("writes are accepted again: the filesystem of the embedded etcd has room", "freeBytes", sp.Free)
	}
}

func (g *spaceGuard) checkAlarm(ctx context.Context, lastRecover *time.Time) {
	on, err := g.store.NoSpaceAlarm(ctx)
	if err != nil {
		return // the etcd monitor says when etcd does not answer
	}
	was := g.alarm.Load() != nil
	if !on {
		if was {
			g.alarm.Store(nil)
			g.log.Info("etcd's NOSPACE alarm is off: writes are accepted again")
		}
		return
	}
	if !was {
		e := errors.New("etcd's database reached its quota (--etcd-quota-backend-bytes) and etcd refuses writes (NOSPACE alarm): delete objects; apictl compacts, defragments and disarms the alarm once there is room")
		g.alarm.Store(&e)
		g.log.Error("etcd refuses writes", "err", e)
	}
	if time.Since(*lastRecover) < recoverInterval {
		return
	}
	*lastRecover = time.Now()
	ok, err := g.store.RecoverSpace(ctx, g.quota)
	switch {
	case err != nil && ctx.Err() == nil:
		g.log.Warn("etcd's NOSPACE alarm stays on", "err", err)
	case ok:
		g.alarm.Store(nil)
		g.log.Info("compacted and defragmented etcd and disarmed its NOSPACE alarm: writes are accepted again")
	}
}

// addSpaceGuard exports the guard's metric and readyz check and runs it with the server; nothing for
// an external cluster (g nil).
func (a *assembly) addSpaceGuard() error {
	s, g, bg := a.server, a.st.space, &a.bg
	if g == nil {
		return nil
	}
	return errors.Join(
		s.Registry().Register(g.free),
		s.AddReadyzChecks(healthz.NamedCheck("etcd-space", g.check)),
		s.AddPostStartHook("start-etcd-space-guard", func(ctx context.Context) error {
			bg.goRun(func() { g.run(ctx) })
			return nil
		}),
	)
}
