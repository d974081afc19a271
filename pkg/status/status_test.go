package status

import (
	"bytes"
	"testing"
	"time"

	"github.com/apictl/apictl/internal/golden"
	"github.com/apictl/apictl/pkg/output"
)

var now = time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)

// fixedReport holds one of every warning and problem, so that the golden files show each line.
func fixedReport() *Report {
	return &Report{
		APIVersion: APIVersion,
		Time:       now,
		Server: Server{URL: "https://127.0.0.1:6443", Version: "v0.9.0", Kubernetes: "v1.37.2", Started: now.Add(-26 * time.Hour),
			FailedChecks: []Check{{Name: "etcd", Reason: "etcdserver: mvcc: database space exceeded"}}},
		Etcd: &Etcd{Embedded: true, Leader: "8e9e05c52164694d", Quota: 100 << 20,
			Members: []Member{
				{ID: "8e9e05c52164694d", Name: "node-a", Role: RoleLeader, PeerURL: "https://10.0.0.1:2380", DBSize: 90 << 20, DBInUse: 88 << 20, RaftTerm: 2, RaftIndex: 1204},
				{ID: "91bc3c398fb3c146", Name: "node-b", Role: RoleFollower, PeerURL: "https://10.0.0.2:2380", Error: "context deadline exceeded"},
				{ID: "fd422379fda50e48", Name: "node-c", Role: RoleLearner, PeerURL: "https://10.0.0.3:2380", DBSize: 20 << 20, DBInUse: 19 << 20,
					RaftTerm: 2, RaftIndex: 1100, Lag: 104, LearnerSince: now.Add(-7 * time.Minute), ReportedAt: now.Add(-6 * time.Second)},
			},
			Alarms: []Alarm{{Member: "8e9e05c52164694d", Type: "NOSPACE"}}},
		Snapshots: &Snapshots{Scheduled: true, Schedule: "0 */12 * * *", Dir: "/var/lib/apictl/snapshots", Interval: 12 * 3600,
			LastSuccess: &Snapshot{Name: "scheduled-node-a-20261130T120000Z", Created: now.Add(-46 * time.Hour), Size: 4 << 20},
			NextDue:     now.Add(2 * time.Hour)},
		Certificates: []Certificate{
			{Name: "ca", Path: "pki/ca.crt", Subject: "CN=apictl-ca", NotAfter: now.Add(3650 * 24 * time.Hour), Status: "ok"},
			{Name: "apiserver", Path: "pki/apiserver.crt", Subject: "CN=apiserver", NotAfter: now.Add(12 * 24 * time.Hour), Status: "expiring"},
			{Name: "front-proxy-client", Path: "pki/front-proxy-client.crt", Subject: "CN=front-proxy-client", NotAfter: now.Add(-time.Hour), Status: "expired"},
		},
		Controllers: &Controllers{Lease: "kube-system/apictl-controllers", Holder: "node-a_1b4e", Since: now.Add(-25 * time.Hour),
			Renewed: now.Add(-2 * time.Second), Duration: 15, Replicas: []string{"node-a_1b4e", "node-b_77c2"},
			Servers: []string{"apiserver-2tq3h7xkvwbkprfzxb3qkvx6ye_0b9e", "apiserver-tmqvgcxoj3uwiqdm7bonk3zs4a_55aa"}},
		API: &API{Groups: 21, Resources: 58, Objects: 1042, Bytes: 3 << 20, Largest: []ResourceSize{
			{Resource: "configmaps", Objects: 900, Bytes: 2 << 20}, {Resource: "secrets", Objects: 100, Bytes: 1 << 19}}},
		Load: &Load{InFlight: map[string]int64{"readOnly": 3, "mutating": 1},
			PriorityLevels: []PriorityLevel{{Name: "workload-low", Executing: 4, Waiting: 12}}, Watches: 37},
	}
}

func TestWriteGolden(t *testing.T) {
	for _, tc := range []struct {
		name     string
		format   output.Format
		terminal bool
		healthy  bool
	}{
		{"table.txt", output.FormatTable, true, false},
		{"pipe.txt", output.FormatTable, false, false},
		{"report.json", output.FormatJSON, false, false},
		{"healthy.txt", output.FormatTable, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := fixedReport()
			if tc.healthy {
				r = &Report{APIVersion: APIVersion, Time: now, Server: Server{URL: "https://127.0.0.1:6443", Version: "v0.9.0",
					Kubernetes: "v1.37.2", Started: now.Add(-time.Minute), Ready: true}}
			}
			Judge(r, now)
			var b bytes.Buffer
			if err := Write(&b, r, tc.format, tc.terminal, now); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, tc.name, b.String())
		})
	}
}

func TestJudge(t *testing.T) {
	tests := []struct {
		name   string
		change func(r *Report)
		exit   int
		want   string // the first finding's message
	}{
		{"healthy", func(r *Report) {}, ExitHealthy, ""},
		{"server unreachable", func(r *Report) { r.Server = Server{Error: "connection refused"} }, ExitProblems, "the server's status could not be read: connection refused"},
		{"failed readyz check", func(r *Report) {
			r.Server.Ready, r.Server.FailedChecks = false, []Check{{Name: "etcd", Reason: "timeout"}}
		}, ExitProblems, "readyz check etcd failed: timeout"},
		{"alarm", func(r *Report) { r.Etcd.Alarms = []Alarm{{Member: "1", Type: "NOSPACE"}} }, ExitProblems, "etcd alarm NOSPACE on member 1"},
		{"no leader", func(r *Report) { r.Etcd.Leader = "" }, ExitProblems, "etcd has no leader: fewer than a quorum of its 1 members answer"},
		{"member down", func(r *Report) {
			r.Etcd.Members = append(r.Etcd.Members, Member{Name: "b", PeerURL: "p", Error: "refused"})
		},
			ExitWarnings, "etcd member b (p) does not answer: refused"},
		{"db over 80%", func(r *Report) { r.Etcd.Members[0].DBSize = 81 }, ExitWarnings,
			"etcd member a's database is 81B, over 80% of its 100B quota (compact and defragment, or raise --etcd-quota-backend-bytes)"},
		{"db at 80%", func(r *Report) { r.Etcd.Members[0].DBSize = 80 }, ExitHealthy, ""},
		{"learner for 5m", func(r *Report) {
			r.Etcd.Members = append(r.Etcd.Members, Member{Name: "c", Role: RoleLearner, LearnerSince: now.Add(-5 * time.Minute)})
		}, ExitWarnings, "etcd member c is still a learner after 5m"},
		{"learner for 4m", func(r *Report) {
			r.Etcd.Members = append(r.Etcd.Members, Member{Name: "c", Role: RoleLearner, LearnerSince: now.Add(-4 * time.Minute)})
		}, ExitHealthy, ""},
		{"snapshots off", func(r *Report) { r.Snapshots.Scheduled = false }, ExitWarnings,
			"scheduled snapshots are off (--etcd-disable-snapshots): nothing backs etcd up"},
		{"snapshot too old", func(r *Report) { r.Snapshots.LastSuccess.Created = now.Add(-2*time.Hour - time.Second) }, ExitWarnings,
			`the last scheduled snapshot s is 120m old, more than twice its schedule "@hourly"`},
		{"no snapshot in a new server", func(r *Report) {
			r.Snapshots.LastSuccess, r.Server.Started = nil, now.Add(-2*time.Hour)
		}, ExitHealthy, ""},
		{"no snapshot since the start", func(r *Report) {
			r.Snapshots.LastSuccess, r.Server.Started = nil, now.Add(-2*time.Hour-time.Minute)
		}, ExitWarnings, `no scheduled snapshot in /snap since the server started 121m ago, more than twice its schedule "@hourly"`},
		{"cert expiring", func(r *Report) { r.Certificates[0].NotAfter = now.Add(29 * 24 * time.Hour) }, ExitWarnings,
			"certificate ca (ca.crt) expires in 29d, on 2026-12-31T10:00:00Z (apictl certs renew)"},
		{"cert expired", func(r *Report) { r.Certificates[0].NotAfter = now }, ExitProblems, "certificate ca (ca.crt) expired on 2026-12-02T10:00:00Z"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &Report{
				Server: Server{Ready: true},
				Etcd:   &Etcd{Leader: "1", Quota: 100, Members: []Member{{ID: "1", Name: "a", Role: RoleLeader, DBSize: 10}}},
				Snapshots: &Snapshots{Scheduled: true, Schedule: "@hourly", Dir: "/snap", Interval: 3600,
					LastSuccess: &Snapshot{Name: "s", Created: now.Add(-2 * time.Hour)}},
				Certificates: []Certificate{{Name: "ca", Path: "ca.crt", NotAfter: now.Add(31 * 24 * time.Hour)}},
			}
			tc.change(r)
			Judge(r, now)
			if r.Exit != tc.exit {
				t.Errorf("exit = %d, want %d; findings %+v", r.Exit, tc.exit, r.Findings)
			}
			got := ""
			if len(r.Findings) > 0 {
				got = r.Findings[0].Message
			}
			if got != tc.want {
				t.Errorf("first finding = %q, want %q", got, tc.want)
			}
		})
	}
}
