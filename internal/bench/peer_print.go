package bench

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/apictl/apictl/pkg/output"
)

// writePeerText prints a peer comparison: the set-up, then throughput and CPU per request of each
// operation on both servers, then their start-up and memory, each with apictl ÷ upstream.
func (r *Report) writePeerText(w io.Writer) error {
	e, p := r.Environment, r.Peer
	other := p.other()
	var b strings.Builder
	fmt.Fprintf(&b, "apictl serve vs %s: %s %s/%s, GOMAXPROCS %d, %d CPUs (%s)\n", p.Upstream, e.GoVersion, e.OS, e.Arch, e.GOMAXPROCS, e.NumCPU, e.CPUModel)
	fmt.Fprintf(&b, "each measurement %s after a %s warm-up, the two servers alternating which goes first, each keeping its best of %d rounds\n", e.Duration, e.Warmup, PeerRounds)
	fmt.Fprintf(&b, "both on one etcd (%s), each under a prefix of its own; objects: %s\n", e.Etcd, p.Objects)
	fmt.Fprintf(&b, "clients: %s\n", p.Client)
	if len(p.Encodings) > 0 {
		fmt.Fprintf(&b, "a LIST asking for gzip came back with Content-Encoding: %s\n", strings.Join(p.Encodings, ", "))
	}
	if len(p.StubAsked) > 0 {
		fmt.Fprintf(&b, "the upstream server asked the core API stub: %s\n", strings.Join(p.StubAsked, ", "))
	}
	b.WriteString("\n")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	tables := []output.Table{
		resultsTable(other, fmt.Sprintf("apictl ÷ %s, %d objects listed (CPU: the server process's, per request)", other, p.Listed), p.Results),
		cpuTable(other, "where each request's CPU went (per request; busy: the share of all CPUs the three used)", p.Results),
	}
	if len(p.FeaturesResults) > 0 {
		tables = append(tables,
			resultsTable(other, "with features on: "+p.Features, p.FeaturesResults),
			cpuTable(other, "with features on, where each request's CPU went", p.FeaturesResults))
	}
	if p.Other == "" {
		tables = append(tables, p.processTable())
	}
	return writeTables(w, tables)
}

// other is what the report calls the side apictl is compared with.
func (p *Peer) other() string {
	if p.Other == "" {
		return "upstream"
	}
	return p.Other
}

// resultsTable shows each operation's throughput and the servers' CPU per request.
func resultsTable(other, title string, results []PeerResult) output.Table {
	o := strings.ToUpper(other)
	t := output.Table{
		Title: title,
		Header: []string{"OPERATION", "CONC", o + " REQ/S", "APICTL REQ/S", "RATIO",
			o + " CPU/REQ", "APICTL CPU/REQ", "CPU RATIO", o + " P99", "APICTL P99", "FAILED"},
	}
	for _, r := range results {
		t.Rows = append(t.Rows, []string{string(r.Operation), strconv.Itoa(r.Concurrency),
			formatRate(r.Upstream.PerSecond), formatRate(r.Apictl.PerSecond), formatRatio(r.Ratio()),
			formatLatency(r.Upstream.CPUPerRequest), formatLatency(r.Apictl.CPUPerRequest),
			formatRatio(PeerPair{Upstream: int64(r.Upstream.CPUPerRequest), Apictl: int64(r.Apictl.CPUPerRequest)}.Ratio()),
			formatLatency(r.Upstream.P99), formatLatency(r.Apictl.P99),
			strconv.Itoa(r.Upstream.Failed) + " / " + strconv.Itoa(r.Apictl.Failed)})
	}
	return t
}

// cpuTable shows, per request, the CPU time of the server, of etcd and of the harness's client, and
// how busy they kept the machine's CPUs: on a machine they fill, a server's throughput is bounded by
// all three, not by its own cost alone.
func cpuTable(other, title string, results []PeerResult) output.Table {
	t := output.Table{
		Title:  title,
		Header: []string{"OPERATION", "CONC", "SERVER", "REQ/S", "SERVER CPU", "ETCD CPU", "CLIENT CPU", "BUSY"},
	}
	for _, r := range results {
		for _, side := range []struct {
			name string
			s    PeerSide
		}{{other, r.Upstream}, {"apictl", r.Apictl}} {
			t.Rows = append(t.Rows, []string{string(r.Operation), strconv.Itoa(r.Concurrency), side.name,
				formatRate(side.s.PerSecond), formatLatency(side.s.CPUPerRequest),
				formatLatency(side.s.EtcdCPUPerRequest), formatLatency(side.s.ClientCPUPerRequest),
				fmt.Sprintf("%.0f%%", 100*side.s.Busy)})
		}
	}
	return t
}

// processTable shows start-up times and resident memory.
func (p *Peer) processTable() output.Table {
	ready := func(v int64) string { return formatLatency(time.Duration(v)) }
	return output.Table{
		Title:  "apictl ÷ upstream, the processes (on the harness's etcd)",
		Header: []string{"MEASURE", "UPSTREAM", "APICTL", "RATIO"},
		Rows: [][]string{
			{"ready after start, nothing stored", ready(p.ReadyEmpty.Upstream), ready(p.ReadyEmpty.Apictl), formatRatio(p.ReadyEmpty.Ratio())},
			{fmt.Sprintf("ready after restart, %d objects stored", p.MemoryObjects), ready(p.ReadyLoaded.Upstream), ready(p.ReadyLoaded.Apictl), formatRatio(p.ReadyLoaded.Ratio())},
			{fmt.Sprintf("resident memory, %d objects listed once, two GCs (VmRSS)", p.MemoryObjects), formatBytes(p.RSS.Upstream), formatBytes(p.RSS.Apictl), formatRatio(p.RSS.Ratio())},
			{"  of which anonymous: heap, stacks (RssAnon)", formatBytes(p.RSSAnon.Upstream), formatBytes(p.RSSAnon.Apictl), formatRatio(p.RSSAnon.Ratio())},
			{"  of which file pages: the binary's, touched (RssFile)", formatBytes(p.RSSFile.Upstream), formatBytes(p.RSSFile.Apictl), formatRatio(p.RSSFile.Ratio())},
		},
	}
}

// problems are the peer comparison's failed requests, on either server.
func (p *Peer) problems() []error {
	var errs []error
	for _, set := range []struct {
		name    string
		results []PeerResult
	}{{"peer comparison", p.Results}, {"peer comparison with features on", p.FeaturesResults}} {
		for _, r := range set.results {
			for _, side := range []struct {
				name string
				s    PeerSide
			}{{p.other(), r.Upstream}, {"apictl", r.Apictl}} {
				if side.s.Failed > 0 {
					errs = append(errs, fmt.Errorf("%s, %s at concurrency %d on %s: %d requests failed, the first with: %s",
						set.name, r.Operation, r.Concurrency, side.name, side.s.Failed, side.s.FirstError))
				}
			}
		}
	}
	return errs
}

func formatRatio(v float64) string { return fmt.Sprintf("%.2f×", v) }
