package status

import (
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"
)

// Thresholds of the warnings, as issue 37 sets them.
const (
	// CertWarnWithin is how close to its expiry a certificate is a warning.
	CertWarnWithin = 30 * 24 * time.Hour
	// DBWarnFraction of the quota in use is a warning.
	DBWarnFraction = 0.8
	// LearnerWarnAfter is how long a learner may stay unpromoted.
	LearnerWarnAfter = 5 * time.Minute
	// SnapshotWarnIntervals is how many schedule periods may pass without a successful snapshot.
	SnapshotWarnIntervals = 2
)

// Judge sets r's Findings and Exit from its facts as of now. It only reads the facts, so that a
// client judges a server's report by its own clock and thresholds.
func Judge(r *Report, now time.Time) {
	f := []Finding{} // an empty list in JSON, not null
	add := func(sev Severity, section, format string, args ...any) {
		f = append(f, Finding{Severity: sev, Section: section, Message: fmt.Sprintf(format, args...)})
	}
	judgeServer(&r.Server, add)
	if r.Etcd != nil {
		judgeEtcd(r.Etcd, now, add)
	}
	if r.Snapshots != nil {
		judgeSnapshots(r.Snapshots, r.Server.Started, now, add)
	}
	if r.CertificatesError != "" {
		add(SeverityWarning, SectionCertificates, "the certificates could not be read: %s", r.CertificatesError)
	}
	for _, c := range r.Certificates {
		switch left := c.NotAfter.Sub(now); {
		case left <= 0:
			add(SeverityProblem, SectionCertificates, "certificate %s (%s) expired on %s", c.Name, c.Path, c.NotAfter.UTC().Format(time.RFC3339))
		case left < CertWarnWithin:
			add(SeverityWarning, SectionCertificates, "certificate %s (%s) expires in %s, on %s (apictl certs renew)", c.Name, c.Path,
				Age(left), c.NotAfter.UTC().Format(time.RFC3339))
		}
	}
	if c := r.Controllers; c != nil && c.Error != "" {
		add(SeverityWarning, SectionControllers, "the controllers' Lease could not be read: %s", c.Error)
	}
	// Problems first, then by section in the report's order; the gathering order stays within each.
	order := []string{SectionServer, SectionEtcd, SectionSnapshots, SectionCertificates, SectionControllers, SectionAPI, SectionLoad}
	slices.SortStableFunc(f, func(a, b Finding) int {
		if a.Severity != b.Severity {
			if a.Severity == SeverityProblem {
				return -1
			}
			return 1
		}
		return slices.Index(order, a.Section) - slices.Index(order, b.Section)
	})
	r.Findings, r.Exit = f, ExitHealthy
	if len(f) > 0 {
		r.Exit = ExitWarnings
		if f[0].Severity == SeverityProblem {
			r.Exit = ExitProblems
		}
	}
}

type addFunc func(sev Severity, section, format string, args ...any)

func judgeServer(s *Server, add addFunc) {
	if s.Error != "" {
		add(SeverityProblem, SectionServer, "the server's status could not be read: %s", s.Error)
		return
	}
	for _, c := range s.FailedChecks {
		add(SeverityProblem, SectionServer, "readyz check %s failed: %s", c.Name, c.Reason)
	}
	if !s.Ready && len(s.FailedChecks) == 0 {
		add(SeverityProblem, SectionServer, "the server is not ready")
	}
}

func judgeEtcd(e *Etcd, now time.Time, add addFunc) {
	if e.Error != "" {
		add(SeverityProblem, SectionEtcd, "etcd could not be asked: %s", e.Error)
		return
	}
	if e.AlarmsError != "" {
		add(SeverityWarning, SectionEtcd, "etcd's alarms could not be listed: %s", e.AlarmsError)
	}
	for _, a := range e.Alarms {
		add(SeverityProblem, SectionEtcd, "etcd alarm %s on member %s", a.Type, a.Member)
	}
	if e.Leader == "" {
		add(SeverityProblem, SectionEtcd, "etcd has no leader: fewer than a quorum of its %d members answer", len(e.Members))
	}
	for _, m := range e.Members {
		switch {
		case m.Error != "":
			add(SeverityWarning, SectionEtcd, "etcd member %s (%s) does not answer: %s", m.Name, m.PeerURL, m.Error)
		case e.Quota > 0 && float64(m.DBSize) > DBWarnFraction*float64(e.Quota):
			add(SeverityWarning, SectionEtcd, "etcd member %s's database is %s, over %d%% of its %s quota (compact and defragment, or raise --etcd-quota-backend-bytes)",
				m.Name, Bytes(m.DBSize), int(DBWarnFraction*100), Bytes(e.Quota))
		}
		if m.Role == RoleLearner && !m.LearnerSince.IsZero() && now.Sub(m.LearnerSince) >= LearnerWarnAfter {
			add(SeverityWarning, SectionEtcd, "etcd member %s is still a learner after %s", m.Name, Age(now.Sub(m.LearnerSince)))
		}
	}
}

// judgeSnapshots warns when no scheduled snapshot succeeded in twice the schedule's period: since
// the last one, or since the server started when there is none yet (a new cluster has none).
func judgeSnapshots(s *Snapshots, started, now time.Time, add addFunc) {
	limit := SnapshotWarnIntervals * time.Duration(s.Interval) * time.Second
	switch {
	case s.Error != "":
		add(SeverityWarning, SectionSnapshots, "the snapshots could not be read: %s", s.Error)
	case !s.Scheduled:
		add(SeverityWarning, SectionSnapshots, "scheduled snapshots are off (--etcd-disable-snapshots): nothing backs etcd up")
	case s.Interval <= 0:
	case s.LastSuccess == nil:
		if !started.IsZero() && now.Sub(started) > limit {
			add(SeverityWarning, SectionSnapshots, "no scheduled snapshot in %s since the server started %s ago, more than twice its schedule %q",
				s.Dir, Age(now.Sub(started)), s.Schedule)
		}
	default:
		if age := now.Sub(s.LastSuccess.Created); age > limit {
			add(SeverityWarning, SectionSnapshots, "the last scheduled snapshot %s is %s old, more than twice its schedule %q", s.LastSuccess.Name, Age(age), s.Schedule)
		}
	}
}

// Age prints a duration as kubectl prints ages: 40s, 7m, 46h, 12d.
func Age(d time.Duration) string {
	if d < 0 {
		d = -d
	}
	return duration.HumanDuration(d)
}

// Bytes prints a size in binary units: 512B, 1.5KiB, 2.0GiB.
func Bytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%dB", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f%ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
