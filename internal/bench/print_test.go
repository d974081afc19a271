package bench

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apictl/apictl/pkg/output"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run with -update to accept):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// sampleReport is a report with every kind of row: etcd results, server results with and without a
// counterpart, every verdict, a failed measurement.
func sampleReport() *Report {
	allocs := func(v float64) *float64 { return &v }
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	r := &Report{
		Environment: Environment{
			GoVersion: "go1.26.8", OS: "linux", Arch: "amd64", GOMAXPROCS: 2, NumCPU: 2, CPUModel: "AMD EPYC",
			Warmup: time.Second, Duration: 5 * time.Second, Etcd: etcdDescription, Client: clientDescription,
		},
		Results: []Result{
			{Operation: OpEtcdGet, Via: ViaEtcd, Concurrency: 8, Requests: 38000, PerSecond: 7600.4, P50: ms(0.79), P99: ms(4.41), Duration: 5 * time.Second},
			{Operation: OpEtcdRange, Via: ViaEtcd, Concurrency: 8, Requests: 1500, PerSecond: 300.2, P50: ms(25.8), P99: ms(57.1), Duration: 5 * time.Second},
			{Operation: OpEtcdCreate, Via: ViaEtcd, Concurrency: 8, Requests: 19000, PerSecond: 3800, P50: ms(1.69), P99: ms(9.95), Duration: 5 * time.Second},
			{Operation: OpGet, Via: ViaHTTP1, Concurrency: 8, Requests: 32000, PerSecond: 6400, P50: ms(1.2), P99: ms(3.5), AllocsPerRequest: allocs(181.4), Duration: 5 * time.Second},
			{Operation: OpList, Via: ViaHTTP1, Concurrency: 8, Requests: 750, PerSecond: 150, P50: ms(52), P99: ms(120), AllocsPerRequest: allocs(4267), Duration: 5 * time.Second},
			{Operation: OpListRV, Via: ViaHTTP1, Concurrency: 8, Requests: 40, PerSecond: 8, P50: ms(990), P99: ms(1500), AllocsPerRequest: allocs(4261), Duration: 5 * time.Second},
			{Operation: OpCreate, Via: ViaHTTP2, Concurrency: 8, Requests: 6000, Failed: 3, FirstError: "POST /api/v1/namespaces/bench-write/configmaps: 500 Internal Server Error, want 201: {}",
				PerSecond: 1200, P50: ms(5.71), P99: ms(13.6), AllocsPerRequest: allocs(423), Duration: 5 * time.Second},
			{Operation: OpUpdate, Via: ViaHTTP2, Concurrency: 8, Requests: 5000, PerSecond: 1000, P50: ms(6.83), P99: ms(20.8), Duration: 5 * time.Second},
		},
		Startup: Startup{Runs: []time.Duration{ms(97.1), ms(78.4), ms(118)}, Median: ms(97.1), Target: StartupTarget},
		Memory: Memory{IdleRSS: 52 << 20, IdleAnon: 12 << 20, IdleFile: 40 << 20, Objects: 12000, LoadedRSS: 81 << 20, PeakRSS: 90 << 20,
			IdleTarget: IdleRSSTarget, LoadedTarget: LoadedRSSTarget},
		Overload: sampleOverload(),
		Kubectl: &Kubectl{Version: "v1.32.4", Invocation: kubectlInvocation, Objects: 1000, Warmups: 1, Runs: 5, Target: KubectlTarget,
			Get:    newTiming([]time.Duration{ms(152), ms(148), ms(171), ms(160), ms(149)}),
			GetTLS: newTiming([]time.Duration{ms(163), ms(158), ms(181), ms(170), ms(155)}),
			Client: newTiming([]time.Duration{ms(41.2), ms(39.8), ms(44), ms(40.5), ms(39.9)})},
		Authz: &Authz{Client: "h2+tls, client certificate CN=bench-authz O=bench (not in system:masters)", Bindings: AuthzBindings, Concurrency: 8,
			Results: []AuthzResult{
				{Operation: OpGet, AlwaysAllow: 9000, RBAC: 8800},
				{Operation: OpList, AlwaysAllow: 2000, RBAC: 1700},
				{Operation: OpCreate, AlwaysAllow: 2500, RBAC: 2400, Failed: 2, FirstError: "POST: 403 Forbidden"},
			}},
	}
	r.Ratios = computeRatios(r.Results, Targets())
	for i := range r.Ratios {
		if r.Ratios[i].Operation == OpListRV {
			r.Ratios[i].Attempts = GuardAttempts // a guarded run measured it again
		}
	}
	return r
}

// sampleOverload is an overload that went as it should.
func sampleOverload() *Overload {
	return &Overload{
		ReadLimit: OverloadReadLimit, MutatingLimit: OverloadMutatingLimit, Clients: 100, Objects: 1000,
		Client: overloadClientDescription, Warmup: time.Second, Duration: 5 * time.Second,
		OK: 1500, OKPerSecond: 300, P50: 118 * time.Millisecond, P99: 240 * time.Millisecond,
		TooMany: 12500, TooManyPerSecond: 2500,
		IdleRSS: 61 << 20, PeakRSS: 77 << 20, Samples: 120, HWM: 78 << 20, AfterRSS: 70 << 20, Allowance: OverloadAllowance,
	}
}

// TestLoadTable covers the load table's rows when something went wrong, one golden file per case.
func TestLoadTable(t *testing.T) {
	failed := sampleOverload()
	failed.TooMany, failed.TooManyPerSecond, failed.Failed = 0, 0, 12
	failed.FirstError = "GET /api/v1/namespaces/bench-list/configmaps: 503 Service Unavailable, want 200 or 429: {}"
	failed.PeakRSS, failed.HWM = 400<<20, 420<<20
	tests := []struct {
		name   string
		report Report
	}{
		{name: "kubectl-skipped", report: Report{Overload: sampleOverload(), Kubectl: &Kubectl{Skipped: "kubectl is not on PATH", Objects: 1000, Target: KubectlTarget}}},
		{name: "failures", report: Report{Overload: failed, Kubectl: &Kubectl{Version: "v1.32.4", Objects: 1000, Warmups: 1, Runs: 3, Target: KubectlTarget,
			Client: newTiming([]time.Duration{40 * time.Millisecond, 41 * time.Millisecond, 39 * time.Millisecond}), Failed: 4,
			FirstError: "kubectl get configmaps ... printed a wrong table: 999 rows, want one per each of the 1000 seeded objects"}}},
		{name: "kubectl-at-target", report: Report{Kubectl: &Kubectl{Objects: 1000, Warmups: 1, Runs: 1, Target: KubectlTarget,
			Get: newTiming([]time.Duration{KubectlTarget - time.Millisecond}), GetTLS: newTiming([]time.Duration{KubectlTarget}),
			Client: newTiming([]time.Duration{50 * time.Millisecond})}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := output.WriteTable(&b, tt.report.loadTable(), true); err != nil {
				t.Fatal(err)
			}
			golden(t, "load-"+tt.name+".txt", b.Bytes())
		})
	}
}

func TestWriteTextWithoutLoad(t *testing.T) {
	// A run of some operations only (BENCH_ONLY) has no load table.
	r := sampleReport()
	r.Overload, r.Kubectl, r.Startup = nil, nil, Startup{}
	var b bytes.Buffer
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "load and clients") || strings.Contains(b.String(), "embedded etcd") {
		t.Errorf("tables of skipped measurements printed:\n%s", b.String())
	}
}

func TestWriteText(t *testing.T) {
	var b bytes.Buffer
	if err := sampleReport().WriteText(&b); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.txt", b.Bytes())
}

func TestWriteTextShortRun(t *testing.T) {
	r := sampleReport()
	r.Environment.Short = true
	r.Environment.Warmup, r.Environment.Duration = 60*time.Millisecond, ShortDuration
	var b bytes.Buffer
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	first := bytes.SplitN(b.Bytes(), []byte("\n"), 3)
	if want := "short run: each measurement 300ms after a 60ms warm-up"; string(first[1]) != want {
		t.Errorf("second line %q, want %q", first[1], want)
	}
}

func TestWriteJSON(t *testing.T) {
	var b bytes.Buffer
	if err := sampleReport().WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.json", b.Bytes())
	// Machines read it back: the numbers survive the round trip.
	var back Report
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	want := sampleReport()
	if len(back.Ratios) != len(want.Ratios) || back.Ratios[0] != want.Ratios[0] || back.Startup.Median != 97100*time.Microsecond ||
		back.Overload == nil || *back.Overload != *want.Overload || back.Kubectl == nil || back.Kubectl.Get.Median != want.Kubectl.Get.Median {
		t.Errorf("round trip lost data: %+v", back)
	}
}

func TestWriteJSONFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "report.json")
	if err := sampleReport().WriteJSONFile(path); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "report.json", got)
	missing := filepath.Join(t.TempDir(), "no-such-dir", "report.json")
	if err := sampleReport().WriteJSONFile(missing); err == nil || !strings.Contains(err.Error(), "writing the report") {
		t.Errorf("error %v, want one saying the report could not be written", err)
	}
}

func TestFormat(t *testing.T) {
	tests := []struct{ got, want string }{
		{formatRate(12345.6), "12346"},
		{formatRate(678.4), "678"},
		{formatRate(45.66), "45.7"},
		{formatRate(7.891), "7.89"},
		{formatLatency(850 * time.Microsecond), "850µs"},
		{formatLatency(1250 * time.Microsecond), "1.25ms"},
		{formatLatency(12500 * time.Microsecond), "12.5ms"},
		{formatLatency(125 * time.Millisecond), "125ms"},
		{formatLatency(2 * time.Second), "2000ms"},
		{formatBytes(45 << 20), "45.0 MiB"},
		{formatBytes(1536 << 10), "1.5 MiB"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}
