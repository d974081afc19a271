package bench

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseProcStatus(t *testing.T) {
	tests := []struct {
		name    string
		status  string
		want    procMemory
		wantErr string
	}{
		{name: "linux", status: "Name:\tapictl\nVmPeak:\t 1300000 kB\nVmHWM:\t   81000 kB\nVmRSS:\t   52712 kB\nRssAnon:\t   11000 kB\nRssFile:\t   41712 kB\nRssShmem:\t       0 kB\nThreads:\t12\n",
			want: procMemory{RSS: 52712 << 10, Peak: 81000 << 10, Anon: 11000 << 10, File: 41712 << 10}},
		{name: "before linux 4.5: no division", status: "VmHWM:\t   81000 kB\nVmRSS:\t   52712 kB\n",
			want: procMemory{RSS: 52712 << 10, Peak: 81000 << 10}},
		{name: "no memory lines (a zombie)", status: "Name:\tapictl\nState:\tZ (zombie)\n", wantErr: "no VmRSS and VmHWM lines"},
		{name: "unexpected unit", status: "VmHWM:\t1 MB\nVmRSS:\t1 MB\n", wantErr: `unexpected value`},
		{name: "not a number", status: "VmHWM:\tx kB\nVmRSS:\t1 kB\n", wantErr: "VmHWM"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseProcStatus(strings.NewReader(tt.status))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestReadMemoryOfThisProcess(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc on this system")
	}
	m, err := readMemory(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if m.RSS <= 0 || m.Peak < m.RSS {
		t.Errorf("rss %d, peak %d: want 0 < rss <= peak", m.RSS, m.Peak)
	}
	if m.Anon+m.File > m.RSS {
		t.Errorf("anonymous %d + file %d exceed the resident set %d", m.Anon, m.File, m.RSS)
	}
}

func TestParseCPUModel(t *testing.T) {
	tests := []struct {
		name, cpuinfo, want string
	}{
		{name: "x86", cpuinfo: "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\nprocessor\t: 1\nmodel name\t: AMD EPYC 7B13\n", want: "AMD EPYC 7B13"},
		{name: "arm", cpuinfo: "processor\t: 0\nBogoMIPS\t: 108.00\n\nHardware\t: BCM2835\nModel\t: Raspberry Pi 4 Model B Rev 1.4\n", want: "BCM2835"},
		{name: "nothing", cpuinfo: "processor\t: 0\n", want: "unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := parseCPUModel(strings.NewReader(tt.cpuinfo)); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParseMetric(t *testing.T) {
	const exposition = `# HELP go_memstats_mallocs_total Total number of heap objects allocated.
# TYPE go_memstats_mallocs_total counter
go_memstats_mallocs_total_extra 1
go_memstats_mallocs_total 66047
go_memstats_frees_total 1.5e+06
apiserver_request_total{code="200",verb="GET"} 12
`
	tests := []struct {
		name    string
		metric  string
		want    float64
		wantErr string
	}{
		{name: "integer", metric: "go_memstats_mallocs_total", want: 66047},
		{name: "exponent", metric: "go_memstats_frees_total", want: 1.5e6},
		{name: "absent", metric: "go_memstats_lookups_total", wantErr: "no sample of go_memstats_lookups_total"},
		{name: "labelled samples are not read", metric: "apiserver_request_total", wantErr: "no sample"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseMetric(strings.NewReader(exposition), tt.metric)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("got %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func TestChildEnv(t *testing.T) {
	got := childEnv([]string{"PATH=/bin", "APICTL_SECURE_PORT=1", "NOTIFY_SOCKET=/run/x", "HOME=/root", "XAPICTL_Y=1"})
	want := []string{"PATH=/bin", "HOME=/root", "XAPICTL_Y=1"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestTailBuffer(t *testing.T) {
	b := newTailBuffer(8)
	for _, s := range []string{"abc", "defgh", "ijklmnopq"} {
		if n, err := b.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	if got := b.String(); got != "jklmnopq" {
		t.Errorf("kept %q, want the last 8 bytes", got)
	}
}

func TestConfigComplete(t *testing.T) {
	got, err := Config{Apictl: "a", Etcd: "e", Duration: 300 * time.Millisecond}.complete()
	if err != nil {
		t.Fatal(err)
	}
	if got.Warmup != 60*time.Millisecond || !slices.Equal(got.Concurrency, []int{8, 32}) || got.ListObjects != 1000 ||
		got.MemoryObjects != 12000 || got.StartupRuns != 3 || got.Settle != time.Second || got.KubectlRuns != 5 || got.Kubectl != "" ||
		got.Logger == nil || got.WorkDir == "" {
		t.Errorf("defaults not filled in: %+v", got)
	}
	if got, _ := (Config{Apictl: "a", Etcd: "e"}).complete(); got.Duration != 5*time.Second || got.Warmup != time.Second {
		t.Errorf("default duration %v, warm-up %v; want 5s and 1s", got.Duration, got.Warmup)
	}
	_, err = Config{Concurrency: []int{8, 0}, Only: []Operation{OpGet, "get"}}.complete()
	for _, want := range []string{"no apictl binary given", "no etcd program given", "concurrency 0: want at least 1",
		`operation "get": want one of ["GET" "LIST" "LIST rv=0" "CREATE" "UPDATE"]`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
}
