package status

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/robfig/cron/v3"
	coordinationv1 "k8s.io/api/coordination/v1"

	"github.com/apictl/apictl/pkg/certs"
	"github.com/apictl/apictl/pkg/snapshot"
)

const (
	// largest is how many resources the API section lists by stored bytes.
	largest = 10
	// leaseTimeout bounds the read of the controllers' Lease.
	leaseTimeout = time.Second
)

// Source is what a running server knows about itself; every function is optional and a nil one
// leaves its section out.
type Source struct {
	Version, Kubernetes string
	Started             time.Time
	// Health asks the server's own health endpoint at path (/readyz?verbose, /readyz/<check>): its
	// status code and body.
	Health func(ctx context.Context, path string) (code int, body string, err error)
	Etcd   *EtcdSource
	// Snapshots, nil when the server takes none.
	Snapshots *SnapshotSource
	CertDir   string
	// Lease reads the controllers' Lease, LeaseName's namespace/name; nil without leader election.
	Lease     func(ctx context.Context) (*coordinationv1.Lease, error)
	LeaseName string
	// Identity is this server's leader election identity.
	Identity string
	// Servers are the holders of the identity Leases that have not expired.
	Servers func(now time.Time) []string
	// Resources reports the served API's size and each stored resource's objects and bytes, from
	// the watch caches: nothing is listed.
	Resources func() (groups, resources int, sizes []ResourceSize)
	// Watches counts the watches the server serves.
	Watches func() int64
	// Metrics are the server's own, for the requests in flight and APF's queues.
	Metrics prometheus.Gatherer
}

// SnapshotSource is the snapshot schedule of a server, or of a data dir.
type SnapshotSource struct {
	// Disabled is --etcd-disable-snapshots.
	Disabled bool
	Spec     string
	Schedule cron.Schedule
	Dir      string
}

// Gatherer gathers a Report from a running server's Source; it serves the report over HTTP.
type Gatherer struct {
	src      Source
	learners learnerClock
	now      func() time.Time
}

// NewGatherer returns a Gatherer of src.
func NewGatherer(src Source) *Gatherer { return &Gatherer{src: src, now: time.Now} }

// Gather asks every section at once, each bounded by ctx, and judges the result.
func (g *Gatherer) Gather(ctx context.Context) *Report {
	now := g.now()
	r := &Report{APIVersion: APIVersion, Time: now.UTC()}
	r.Server = Server{Version: g.src.Version, Kubernetes: g.src.Kubernetes, Started: g.src.Started.UTC()}
	var wg sync.WaitGroup
	if g.src.Health != nil {
		wg.Go(func() { r.Server.Ready, r.Server.FailedChecks, r.Server.Error = readiness(ctx, g.src.Health) })
	}
	if g.src.Etcd != nil {
		wg.Go(func() { r.Etcd = etcdFacts(ctx, *g.src.Etcd, &g.learners, now) })
	}
	if g.src.Snapshots != nil {
		wg.Go(func() { r.Snapshots = SnapshotFacts(*g.src.Snapshots, now) })
	}
	if g.src.CertDir != "" {
		wg.Go(func() { r.Certificates, r.CertificatesError = certificates(g.src.CertDir, now) })
	}
	wg.Go(func() { r.Controllers = g.controllers(ctx) })
	if g.src.Resources != nil {
		wg.Go(func() { r.API = apiFacts(g.src.Resources) })
	}
	wg.Go(func() { r.Load = g.load() })
	wg.Wait()
	Judge(r, now)
	return r
}

// readiness reads /readyz?verbose and, for each failed check, /readyz/<check>, whose body has the
// reason that the aggregate withholds.
func readiness(ctx context.Context, health func(context.Context, string) (int, string, error)) (bool, []Check, string) {
	code, body, err := health(ctx, "/readyz?verbose")
	if err != nil {
		return false, nil, fmt.Sprintf("asking /readyz: %v", err)
	}
	if code == http.StatusOK {
		return true, nil, ""
	}
	var failed []Check
	for line := range strings.Lines(body) {
		name, ok := strings.CutPrefix(strings.TrimSpace(line), "[-]")
		if !ok {
			continue
		}
		name, _, _ = strings.Cut(name, " ")
		reason := "no reason given"
		if _, b, err := health(ctx, "/readyz/"+name); err != nil {
			reason = err.Error()
		} else if b = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(b), "internal server error: ")); b != "" {
			reason = b
		}
		failed = append(failed, Check{Name: name, Reason: reason})
	}
	return false, failed, ""
}

// SnapshotFacts reads the scheduled snapshots in src's dir and when the next is due.
func SnapshotFacts(src SnapshotSource, now time.Time) *Snapshots {
	s := &Snapshots{Scheduled: !src.Disabled, Dir: src.Dir}
	if !src.Disabled && src.Schedule != nil {
		s.Schedule = src.Spec
		s.NextDue = src.Schedule.Next(now).UTC()
		s.Interval = int64(src.Schedule.Next(s.NextDue).Sub(s.NextDue) / time.Second)
	}
	list, err := snapshot.List(src.Dir)
	if err != nil {
		s.Error = err.Error()
		return s
	}
	for _, info := range slices.Backward(list) {
		if strings.HasPrefix(info.Name, snapshot.ScheduledPrefix) {
			s.LastSuccess = &Snapshot{Name: info.Name, Created: info.Created.UTC(), Size: info.Size}
			break
		}
	}
	return s
}

// CertificateFacts lists the certificates of certDir as `apictl certs list` does.
func CertificateFacts(certDir string, now time.Time) ([]Certificate, error) {
	l, err := certs.List(certs.ListOptions{Dir: certDir, Now: now, WarnWithin: CertWarnWithin})
	if err != nil {
		return nil, err
	}
	out := make([]Certificate, 0, len(l.Certificates))
	for _, c := range l.Certificates {
		out = append(out, Certificate{Name: c.Name, Path: c.Path, Subject: c.Subject, NotAfter: c.NotAfter.UTC(), Status: string(c.Status)})
	}
	return out, nil
}

func (g *Gatherer) controllers(ctx context.Context) *Controllers {
	c := &Controllers{Lease: g.src.LeaseName}
	if g.src.Identity != "" {
		c.Replicas = []string{g.src.Identity}
	}
	if g.src.Servers != nil {
		c.Servers = g.src.Servers(time.Now())
		slices.Sort(c.Servers)
	}
	if g.src.Lease == nil {
		return c
	}
	// A Lease is read from etcd with a quorum: without one, the report must not wait for it.
	ctx, cancel := context.WithTimeout(ctx, leaseTimeout)
	defer cancel()
	lease, err := g.src.Lease(ctx)
	if err != nil {
		c.Error = err.Error()
		return c
	}
	if h := lease.Spec.HolderIdentity; h != nil {
		c.Holder = *h
	}
	if t := lease.Spec.AcquireTime; t != nil {
		c.Since = t.UTC()
	}
	if t := lease.Spec.RenewTime; t != nil {
		c.Renewed = t.UTC()
	}
	if d := lease.Spec.LeaseDurationSeconds; d != nil {
		c.Duration = int64(*d)
	}
	return c
}

func apiFacts(resources func() (int, int, []ResourceSize)) *API {
	groups, count, sizes := resources()
	a := &API{Groups: groups, Resources: count, Largest: []ResourceSize{}}
	for _, s := range sizes {
		a.Objects += s.Objects
		a.Bytes += s.Bytes
	}
	slices.SortFunc(sizes, func(x, y ResourceSize) int {
		return cmp.Or(cmp.Compare(y.Bytes, x.Bytes), strings.Compare(x.Resource, y.Resource))
	})
	a.Largest = append(a.Largest, sizes[:min(largest, len(sizes))]...)
	return a
}

// load reads the requests in flight and APF's priority levels from the server's metrics: the
// gauges that kube-apiserver exports for the same purpose.
func (g *Gatherer) load() *Load {
	l := &Load{}
	if g.src.Watches != nil {
		l.Watches = g.src.Watches()
	}
	if g.src.Metrics == nil {
		return l
	}
	families, _ := g.src.Metrics.Gather() // a partial gathering still says what it has
	levels := map[string]*PriorityLevel{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			label := func(name string) string {
				for _, p := range m.GetLabel() {
					if p.GetName() == name {
						return p.GetValue()
					}
				}
				return ""
			}
			v := int64(m.GetGauge().GetValue())
			switch f.GetName() {
			case "apiserver_current_inflight_requests":
				if l.InFlight == nil {
					l.InFlight = map[string]int64{}
				}
				l.InFlight[label("request_kind")] += v
			case "apiserver_flowcontrol_current_executing_requests", "apiserver_flowcontrol_current_inqueue_requests":
				name := label("priority_level")
				p := levels[name]
				if p == nil {
					p = &PriorityLevel{Name: name}
					levels[name] = p
				}
				if f.GetName() == "apiserver_flowcontrol_current_executing_requests" {
					p.Executing += v
				} else {
					p.Waiting += v
				}
			}
		}
	}
	for _, p := range levels {
		l.PriorityLevels = append(l.PriorityLevels, *p)
	}
	slices.SortFunc(l.PriorityLevels, func(a, b PriorityLevel) int { return strings.Compare(a.Name, b.Name) })
	return l
}

// certificates is CertificateFacts with its error as the report keeps it.
func certificates(certDir string, now time.Time) ([]Certificate, string) {
	c, err := CertificateFacts(certDir, now)
	if err != nil {
		return nil, err.Error()
	}
	return c, ""
}
