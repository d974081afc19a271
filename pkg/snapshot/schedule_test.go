package snapshot

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestParseSchedule(t *testing.T) {
	from := time.Date(2026, 11, 26, 13, 5, 0, 0, time.UTC)
	for _, tc := range []struct {
		spec, next, err string
	}{
		{spec: "0 */12 * * *", next: "2026-11-27T00:00:00Z"},
		{spec: "*/15 * * * *", next: "2026-11-26T13:15:00Z"},
		{spec: "@every 2s", next: "2026-11-26T13:05:02Z"},
		{spec: "@hourly", next: "2026-11-26T14:00:00Z"},
		{spec: "0 */12 * *", err: `"0 */12 * *" is not a cron schedule`},
		{spec: "", err: "is not a cron schedule"},
	} {
		s, err := ParseSchedule(tc.spec)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseSchedule(%q) = %v, want an error with %q", tc.spec, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("ParseSchedule(%q): %v", tc.spec, err)
		}
		if got := s.Next(from).UTC().Format(time.RFC3339); got != tc.next {
			t.Errorf("%q after %s: %s, want %s", tc.spec, from, got, tc.next)
		}
	}
}

// TestSchedulerKeepsRetention runs the scheduler through five times of its schedule against a real
// etcd: exactly the retention of scheduled snapshots is left, on-demand ones are not pruned, and the
// metrics count what happened.
func TestSchedulerKeepsRetention(t *testing.T) {
	dataDir := t.TempDir()
	_, cl := startEtcd(t, dataDir)
	put(t, cl, 3, "x")
	dir := filepath.Join(dataDir, "snapshots")
	if _, err := Save(context.Background(), cl.Maintenance, SaveOptions{Dir: dir, Name: "on-demand-keep"}); err != nil {
		t.Fatal(err)
	}
	schedule, err := ParseSchedule("@every 1h")
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	s, err := NewScheduler(SchedulerConfig{Schedule: schedule, Retention: 2, Dir: dir, Host: "h",
		Source: Source{DataDir: dataDir}, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	s.now = func() time.Time { return clock }
	fires := 0
	s.waitFor = func(ctx context.Context, d time.Duration) bool {
		if fires == 5 {
			return false
		}
		fires++
		clock = clock.Add(d)
		return true
	}
	s.Run(context.Background())
	list, err := List(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, i := range list {
		names = append(names, i.Name)
	}
	want := "scheduled-h-20261126T040000Z,scheduled-h-20261126T050000Z,on-demand-keep" // oldest first; the clock is fake
	if got := strings.Join(names, ","); got != want {
		t.Errorf("snapshots left: %s, want %s", got, want)
	}
	if got := testutil.ToFloat64(s.total.WithLabelValues("success")); got != 5 {
		t.Errorf("apictl_etcd_snapshots_total{result=success} = %v, want 5", got)
	}
	if got := testutil.ToFloat64(s.last.WithLabelValues("success")); got != float64(clock.Unix()) {
		t.Errorf("last success at %v, want %v", got, clock.Unix())
	}

	// A failure is counted too, and leaves nothing behind.
	s.cfg.Source = Source{DataDir: t.TempDir()}
	if err := s.Take(context.Background(), clock); err == nil {
		t.Error("a snapshot of a data dir without etcd succeeded")
	}
	if got := testutil.ToFloat64(s.total.WithLabelValues("failure")); got != 1 {
		t.Errorf("failures counted: %v, want 1", got)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 6 { // three snapshots and their records
		t.Errorf("%d files in the snapshot dir after a failure, want 6", len(entries))
	}
}
