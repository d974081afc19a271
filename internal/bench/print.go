package bench

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/apictl/apictl/pkg/output"
)

// WriteText prints the report as aligned tables under a description of the machine and the set-up,
// ready to paste into a note.
func (r *Report) WriteText(w io.Writer) error {
	if r.Peer != nil {
		return r.writePeerText(w)
	}
	e := r.Environment
	mode := "full"
	if e.Short {
		mode = "short"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "apictl serve vs etcd: %s %s/%s, GOMAXPROCS %d, %d CPUs (%s)\n", e.GoVersion, e.OS, e.Arch, e.GOMAXPROCS, e.NumCPU, e.CPUModel)
	fmt.Fprintf(&b, "%s run: each measurement %s after a %s warm-up\n", mode, e.Duration, e.Warmup)
	fmt.Fprintf(&b, "etcd: %s\nclients: %s\n", e.Etcd, e.Client)
	if e.CRDs > 0 {
		fmt.Fprintf(&b, "installed before measuring: %d CRDs, served\n", e.CRDs)
	}
	if r.Overload != nil {
		fmt.Fprintf(&b, "overload clients: %s\n", r.Overload.Client)
	}
	if r.Kubectl != nil && r.Kubectl.Invocation != "" {
		fmt.Fprintf(&b, "kubectl: %s\n", r.Kubectl.Invocation)
	}
	b.WriteString("\n")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	tables := []output.Table{r.etcdTable(), r.serverTable()}
	if len(r.Startup.Runs) > 0 {
		tables = append(tables, r.startupTable())
	}
	if r.Overload != nil || r.Kubectl != nil {
		tables = append(tables, r.loadTable())
	}
	if r.Authz != nil {
		tables = append(tables, r.Authz.table())
	}
	if r.Churn != nil {
		tables = append(tables, r.Churn.table())
	}
	if r.Scale != nil {
		tables = append(tables, r.Scale.table())
	}
	return writeTables(w, tables)
}

// writeTables prints tables aligned, a blank line between them.
func writeTables(w io.Writer, tables []output.Table) error {
	for i, t := range tables {
		if i > 0 {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return err
			}
		}
		if err := output.WriteTable(w, t, true); err != nil {
			return err
		}
	}
	return nil
}

// WriteJSON prints the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error { return output.WriteJSON(w, r) }

// WriteJSONFile writes the report as JSON to the file at path, created or truncated.
func (r *Report) WriteJSONFile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	if err := errors.Join(r.WriteJSON(f), f.Close()); err != nil {
		return fmt.Errorf("writing the report to %s: %w", path, err)
	}
	return nil
}

func (r *Report) etcdTable() output.Table {
	t := output.Table{
		Title:  "etcd directly (clientv3, one client)",
		Header: []string{"OPERATION", "CONC", "OPS/S", "P50", "P99", "FAILED"},
	}
	for _, res := range r.Results {
		if res.Via != ViaEtcd {
			continue
		}
		t.Rows = append(t.Rows, []string{string(res.Operation), strconv.Itoa(res.Concurrency),
			formatRate(res.PerSecond), formatLatency(res.P50), formatLatency(res.P99), strconv.Itoa(res.Failed)})
	}
	return t
}

func (r *Report) serverTable() output.Table {
	t := output.Table{
		Title: "apictl serve (allocations: the server process's, per request)",
		Header: []string{"OPERATION", "VIA", "CONC", "REQ/S", "P50", "P99", "ALLOCS/REQ", "FAILED",
			"VS ETCD", "ETCD OPS/S", "RATIO", "TARGET", "VERDICT"},
	}
	type key struct {
		op  Operation
		via Via
		c   int
	}
	ratios := make(map[key]Ratio, len(r.Ratios))
	for _, ra := range r.Ratios {
		ratios[key{ra.Operation, ra.Via, ra.Concurrency}] = ra
	}
	for _, res := range r.Results {
		if res.Via == ViaEtcd {
			continue
		}
		allocs := "-"
		if res.AllocsPerRequest != nil {
			allocs = strconv.FormatFloat(*res.AllocsPerRequest, 'f', 0, 64)
		}
		row := []string{string(res.Operation), string(res.Via), strconv.Itoa(res.Concurrency),
			formatRate(res.PerSecond), formatLatency(res.P50), formatLatency(res.P99), allocs, strconv.Itoa(res.Failed)}
		if ra, ok := ratios[key{res.Operation, res.Via, res.Concurrency}]; ok {
			verdict := ra.Verdict()
			if ra.Attempts > 1 {
				verdict += fmt.Sprintf(" (best of %d)", ra.Attempts)
			}
			row = append(row, string(ra.Against), formatRate(ra.Etcd), fmt.Sprintf("%.2f×", ra.Value),
				fmt.Sprintf("≥ %.2f×", ra.Ratio), verdict)
		} else {
			row = append(row, "-", "-", "-", "-", "-")
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func (r *Report) startupTable() output.Table {
	s, m := r.Startup, r.Memory
	runs := make([]string, len(s.Runs))
	for i, d := range s.Runs {
		runs[i] = formatLatency(d)
	}
	rows := [][]string{
		{fmt.Sprintf("ready after start, median of %d (%s)", len(s.Runs), strings.Join(runs, ", ")),
			formatLatency(s.Median), "≤ " + formatLatency(s.Target), atMost(int64(s.Median), int64(s.Target))},
		{"resident memory idle (VmRSS)", formatBytes(m.IdleRSS), "≤ " + formatBytes(m.IdleTarget), atMost(m.IdleRSS, m.IdleTarget)},
	}
	if m.IdleAnon > 0 || m.IdleFile > 0 {
		rows = append(rows,
			[]string{"  of which anonymous: heap, stacks, etcd (RssAnon)", formatBytes(m.IdleAnon), "-", "-"},
			[]string{"  of which file pages mapped: the binary (RssFile)", formatBytes(m.IdleFile), "-", "-"})
	}
	rows = append(rows,
		[]string{fmt.Sprintf("resident memory with %d objects (VmRSS)", m.Objects), formatBytes(m.LoadedRSS),
			"≤ " + formatBytes(m.LoadedTarget), atMost(m.LoadedRSS, m.LoadedTarget)},
		[]string{"peak resident memory (VmHWM)", formatBytes(m.PeakRSS), "-", "-"})
	return output.Table{
		Title:  "apictl serve on its embedded etcd (fsync on), as users run it",
		Header: []string{"MEASURE", "VALUE", "TARGET", "VERDICT"},
		Rows:   rows,
	}
}

// loadTable shows the overload of a server of its own and kubectl against the compared server, both
// on the harness's etcd with the listed objects.
func (r *Report) loadTable() output.Table {
	t := output.Table{
		Title:  "load and clients (on the harness's etcd, listing the seeded objects)",
		Header: []string{"MEASURE", "VALUE", "TARGET", "VERDICT"},
	}
	if o := r.Overload; o != nil {
		t.Rows = append(t.Rows, o.rows()...)
	}
	if k := r.Kubectl; k != nil {
		t.Rows = append(t.Rows, k.rows()...)
	}
	return t
}

// table shows RBAC's throughput against AlwaysAllow's for the same user.
func (a *Authz) table() output.Table {
	t := output.Table{
		Title:  fmt.Sprintf("authorization: RBAC (%d other bindings) vs AlwaysAllow, %s, concurrency %d, best of %d each", a.Bindings, a.Client, a.Concurrency, authzRounds),
		Header: []string{"OPERATION", "ALWAYSALLOW", "RBAC", "RATIO", "TARGET", "VERDICT"},
	}
	for _, r := range a.Results {
		verdict := "ok"
		switch {
		case r.Failed > 0:
			verdict = "FAILED"
		case r.Ratio() < AuthzTarget:
			verdict = "below target"
		}
		t.Rows = append(t.Rows, []string{string(r.Operation), formatRate(r.AlwaysAllow) + "/s", formatRate(r.RBAC) + "/s",
			fmt.Sprintf("%.2f×", r.Ratio()), fmt.Sprintf("≥ %.2f×", AuthzTarget), verdict})
	}
	return t
}

func (o *Overload) rows() [][]string {
	limit := fmt.Sprintf("≤ %s (idle + %s)", formatBytes(o.PeakLimit()), formatBytes(o.Allowance))
	tooMany, failed := "ok", "ok"
	if o.TooMany == 0 {
		tooMany = "none"
	}
	if o.Failed > 0 {
		failed = "FAILED"
	}
	return [][]string{
		{fmt.Sprintf("overload: %d clients LIST %d objects, --max-requests-inflight %d; 200s (p50 %s, p99 %s)",
			o.Clients, o.Objects, o.ReadLimit, formatLatency(o.P50), formatLatency(o.P99)), formatRate(o.OKPerSecond) + "/s", "-", "-"},
		{"overload: 429s with Retry-After and a TooManyRequests Status", formatRate(o.TooManyPerSecond) + "/s", "> 0", tooMany},
		{"overload: other answers (failed requests)", strconv.Itoa(o.Failed), "0", failed},
		{"overload: resident memory before (VmRSS)", formatBytes(o.IdleRSS), "-", "-"},
		{fmt.Sprintf("overload: peak resident memory (largest of %d VmRSS readings)", o.Samples), formatBytes(o.PeakRSS), limit, atMost(o.PeakRSS, o.PeakLimit())},
		{"overload: peak resident memory (VmHWM)", formatBytes(o.HWM), limit, atMost(o.HWM, o.PeakLimit())},
		{"overload: resident memory after, idle again (VmRSS)", formatBytes(o.AfterRSS), "-", "-"},
	}
}

func (k *Kubectl) rows() [][]string {
	get := fmt.Sprintf("kubectl get configmaps, table of %d", k.Objects)
	target := "< " + formatLatency(k.Target)
	if k.Skipped != "" {
		return [][]string{{get, "skipped: " + k.Skipped, target, "-"}}
	}
	version := "kubectl version --client (kubectl's own start-up)"
	if k.Version != "" {
		version = fmt.Sprintf("kubectl version --client (%s: kubectl's own start-up)", k.Version)
	}
	rows := [][]string{
		{get + ", insecure port, " + k.Get.describe(), formatTiming(k.Get), target, k.verdict(k.Get)},
		{get + ", TLS (admin kubeconfig), " + k.GetTLS.describe(), formatTiming(k.GetTLS), target, k.verdict(k.GetTLS)},
		{version + ", " + k.Client.describe(), formatTiming(k.Client), "-", "-"},
	}
	if k.Failed > 0 {
		rows = append(rows, []string{"kubectl runs that failed or printed a wrong table", strconv.Itoa(k.Failed), "0", "FAILED"})
	}
	return rows
}

// verdict compares a get's median with the target, which it must beat.
func (k *Kubectl) verdict(t Timing) string {
	switch {
	case len(t.Runs) == 0:
		return "no data"
	case t.Median < k.Target:
		return "ok"
	default:
		return "over target"
	}
}

// describe says what a timing's value is: "median of 5 (min 120ms, max 180ms)".
func (t Timing) describe() string {
	if len(t.Runs) == 0 {
		return "no successful run"
	}
	return fmt.Sprintf("median of %d (min %s, max %s)", len(t.Runs), formatLatency(t.Min), formatLatency(t.Max))
}

func formatTiming(t Timing) string {
	if len(t.Runs) == 0 {
		return "-"
	}
	return formatLatency(t.Median)
}

func atMost(v, limit int64) string {
	if v <= limit {
		return "ok"
	}
	return "over target"
}

// formatRate keeps three significant digits or more: 12345, 678, 45.6, 7.89.
func formatRate(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
}

// formatLatency prints microseconds below a millisecond and milliseconds with up to two decimals
// above: 850µs, 1.25ms, 12.5ms, 125ms.
func formatLatency(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return strconv.FormatInt(d.Microseconds(), 10) + "µs"
	case d < 10*time.Millisecond:
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 2, 64) + "ms"
	case d < 100*time.Millisecond:
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64) + "ms"
	default:
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 0, 64) + "ms"
	}
}

// formatBytes prints mebibytes with one decimal.
func formatBytes(n int64) string {
	return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
}
