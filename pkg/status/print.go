package status

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/apictl/apictl/pkg/output"
)

// Formats are those `apictl status` accepts, the default first.
var Formats = []output.Format{output.FormatTable, output.FormatJSON, output.FormatYAML}

// Write prints r as of now: JSON or YAML as it is, or one table per section, the findings first with
// problems marked "!!" and warnings "!". In a pipe each row starts with its section's name, since
// the tables' titles and headers are left out there.
func Write(w io.Writer, r *Report, f output.Format, terminal bool, now time.Time) error {
	switch f {
	case output.FormatJSON:
		return output.WriteJSON(w, r)
	case output.FormatYAML:
		return output.WriteYAML(w, r)
	}
	tables := []output.Table{findingsTable(r), serverTable(r, now)}
	if r.Etcd != nil {
		tables = append(tables, etcdTable(r.Etcd, now))
	}
	if r.Snapshots != nil {
		tables = append(tables, snapshotsTable(r.Snapshots, now))
	}
	if len(r.Certificates) > 0 || r.CertificatesError != "" {
		tables = append(tables, certificatesTable(r.Certificates, now))
	}
	if r.Controllers != nil {
		tables = append(tables, controllersTable(r.Controllers, now))
	}
	if r.API != nil {
		tables = append(tables, apiTable(r.API))
	}
	if r.Load != nil {
		tables = append(tables, loadTable(r.Load))
	}
	for i, t := range tables {
		if !terminal {
			section := strings.TrimRight(strings.ToLower(strings.Fields(t.Title)[0]), ":,")
			for j := range t.Rows {
				t.Rows[j] = append([]string{section}, t.Rows[j]...)
			}
		} else if i > 0 {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return err
			}
		}
		if err := output.WriteTable(w, t, terminal); err != nil {
			return err
		}
	}
	return nil
}

func findingsTable(r *Report) output.Table {
	verdict := "HEALTHY"
	switch r.Exit {
	case ExitWarnings:
		verdict = "WARNINGS"
	case ExitProblems:
		verdict = "PROBLEMS"
	}
	t := output.Table{Title: "STATUS: " + verdict + " (exit " + strconv.Itoa(r.Exit) + ")", Header: []string{"", "SECTION", "FINDING"}}
	for _, f := range r.Findings {
		mark := "!"
		if f.Severity == SeverityProblem {
			mark = "!!"
		}
		t.Rows = append(t.Rows, []string{mark, f.Section, f.Message})
	}
	if len(t.Rows) == 0 {
		t.Rows = append(t.Rows, []string{"", "-", "no warnings, no problems"})
	}
	return t
}

func serverTable(r *Report, now time.Time) output.Table {
	s := r.Server
	t := output.Table{Title: "SERVER", Header: []string{"URL", "VERSION", "KUBERNETES", "UPTIME", "READY"}}
	if s.Error != "" {
		t.Rows = append(t.Rows, []string{orDash(s.URL), "-", "-", "-", "unreachable"})
		return t
	}
	uptime := "-"
	if !s.Started.IsZero() {
		uptime = Age(now.Sub(s.Started))
	}
	ready := "yes"
	if !s.Ready {
		ready = "no"
		for _, c := range s.FailedChecks {
			ready += ", " + c.Name
		}
	}
	t.Rows = append(t.Rows, []string{orDash(s.URL), orDash(s.Version), orDash(s.Kubernetes), uptime, ready})
	return t
}

func etcdTable(e *Etcd, now time.Time) output.Table {
	title := "ETCD (external)"
	if e.Embedded {
		title = "ETCD (embedded)"
	}
	if e.Quota > 0 {
		title += ", quota " + Bytes(e.Quota)
	}
	// STATE is the member's alarms, "unreachable", or how old the sizes its replica reported are.
	t := output.Table{Title: title, Header: []string{"MEMBER", "ID", "ROLE", "PEER URL", "DB SIZE", "IN USE", "QUOTA USED", "RAFT INDEX", "LAG", "STATE"}}
	if e.Error != "" {
		t.Rows = append(t.Rows, []string{"-", "-", RoleUnknown, "-", "-", "-", "-", "-", "-", e.Error})
		return t
	}
	for _, m := range e.Members {
		var alarms []string
		for _, a := range e.Alarms {
			if a.Member == m.ID {
				alarms = append(alarms, a.Type)
			}
		}
		role := m.Role
		if m.Role == RoleLearner && !m.LearnerSince.IsZero() {
			role += " for " + Age(now.Sub(m.LearnerSince))
		}
		if m.Error != "" || m.RaftIndex == 0 {
			// A member whose status could not be asked: another's private etcd, or one that is down.
			state := orDash(strings.Join(alarms, ","))
			if m.Error != "" {
				state = "unreachable"
			}
			t.Rows = append(t.Rows, []string{m.Name, m.ID, role, m.PeerURL, "-", "-", "-", "-", "-", state})
			continue
		}
		used := "-"
		if e.Quota > 0 {
			used = fmt.Sprintf("%.0f%%", 100*float64(m.DBSize)/float64(e.Quota))
		}
		state := orDash(strings.Join(alarms, ","))
		if !m.ReportedAt.IsZero() && len(alarms) == 0 {
			state = "reported " + Age(now.Sub(m.ReportedAt)) + " ago"
		}
		t.Rows = append(t.Rows, []string{m.Name, m.ID, role, m.PeerURL, Bytes(m.DBSize), Bytes(m.DBInUse), used,
			strconv.FormatUint(m.RaftIndex, 10), strconv.FormatUint(m.Lag, 10), state})
	}
	return t
}

func snapshotsTable(s *Snapshots, now time.Time) output.Table {
	t := output.Table{Title: "SNAPSHOTS", Header: []string{"SCHEDULE", "DIR", "LAST SUCCESS", "AGE", "LAST FAILURE", "NEXT DUE"}}
	schedule := s.Schedule
	if !s.Scheduled {
		schedule = "off"
	}
	last, age := "-", "-"
	if s.LastSuccess != nil {
		last, age = s.LastSuccess.Name, Age(now.Sub(s.LastSuccess.Created))
	}
	t.Rows = append(t.Rows, []string{orDash(schedule), s.Dir, last, age, timeOrDash(s.LastFailure), timeOrDash(s.NextDue)})
	return t
}

func certificatesTable(certs []Certificate, now time.Time) output.Table {
	t := output.Table{Title: "CERTIFICATES", Header: []string{"CERTIFICATE", "SUBJECT", "EXPIRES", "RESIDUAL TIME", "STATUS"}}
	for _, c := range certs {
		residual := Age(c.NotAfter.Sub(now))
		if c.NotAfter.Before(now) {
			residual = "-" + residual
		}
		t.Rows = append(t.Rows, []string{c.Name, c.Subject, timeOrDash(c.NotAfter), residual, c.Status})
	}
	return t
}

func controllersTable(c *Controllers, now time.Time) output.Table {
	t := output.Table{Title: "CONTROLLERS", Header: []string{"LEASE", "HOLDER", "SINCE", "RENEWED", "REPLICAS", "SERVERS"}}
	servers := orDash(strings.Join(c.Servers, ","))
	if c.Lease == "" {
		t.Rows = append(t.Rows, []string{"- (no leader election)", "this server", "-", "-", orDash(strings.Join(c.Replicas, ",")), servers})
		return t
	}
	since, renewed := "-", "-"
	if !c.Since.IsZero() {
		since = Age(now.Sub(c.Since)) + " ago"
	}
	if !c.Renewed.IsZero() {
		renewed = Age(now.Sub(c.Renewed)) + " ago"
	}
	holder := orDash(c.Holder)
	if c.Error != "" {
		holder = "unknown: " + c.Error
	}
	t.Rows = append(t.Rows, []string{c.Lease, holder, since, renewed, orDash(strings.Join(c.Replicas, ",")), servers})
	return t
}

func apiTable(a *API) output.Table {
	t := output.Table{Title: fmt.Sprintf("API: %d groups, %d resources, %d objects, %s stored", a.Groups, a.Resources, a.Objects, Bytes(a.Bytes)),
		Header: []string{"RESOURCE", "OBJECTS", "STORED"}}
	for _, r := range a.Largest {
		t.Rows = append(t.Rows, []string{r.Resource, strconv.FormatInt(r.Objects, 10), Bytes(r.Bytes)})
	}
	return t
}

func loadTable(l *Load) output.Table {
	t := output.Table{Title: "LOAD", Header: []string{"WHAT", "EXECUTING", "WAITING"}}
	for _, kind := range []string{"readOnly", "mutating"} {
		if n, ok := l.InFlight[kind]; ok {
			t.Rows = append(t.Rows, []string{"in flight: " + kind, strconv.FormatInt(n, 10), "-"})
		}
	}
	for _, p := range l.PriorityLevels {
		t.Rows = append(t.Rows, []string{"priority level " + p.Name, strconv.FormatInt(p.Executing, 10), strconv.FormatInt(p.Waiting, 10)})
	}
	t.Rows = append(t.Rows, []string{"watches", strconv.FormatInt(l.Watches, 10), "-"})
	return t
}

func timeOrDash(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
