package bench

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"
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
		Memory: Memory{IdleRSS: 52 << 20, Objects: 12000, LoadedRSS: 81 << 20, PeakRSS: 90 << 20,
			IdleTarget: IdleRSSTarget, LoadedTarget: LoadedRSSTarget},
	}
	r.Ratios = computeRatios(r.Results, Targets())
	return r
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
	if len(back.Ratios) != len(want.Ratios) || back.Ratios[0] != want.Ratios[0] || back.Startup.Median != 97100*time.Microsecond {
		t.Errorf("round trip lost data: %+v", back)
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
