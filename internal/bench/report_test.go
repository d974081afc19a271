package bench

import (
	"strings"
	"testing"
	"time"
)

func TestTargetsAreIssue8s(t *testing.T) {
	want := map[[2]string]float64{
		{"GET", "http/1.1"}: 0.8, {"GET", "h2+tls"}: 0.6,
		{"LIST", "http/1.1"}: 0.4, {"LIST", "h2+tls"}: 0.4,
		{"LIST rv=0", "http/1.1"}: 2, {"LIST rv=0", "h2+tls"}: 2,
		{"CREATE", "http/1.1"}: 0.5, {"CREATE", "h2+tls"}: 0.5,
		{"UPDATE", "http/1.1"}: 0.4, {"UPDATE", "h2+tls"}: 0.4,
		// The features-on server is held to four fifths of HTTP/2's targets (issues 17 and 35).
		{"GET", "h2+tls+features"}: 0.6 * FeaturesAllowance, {"LIST", "h2+tls+features"}: 0.4 * FeaturesAllowance, {"LIST rv=0", "h2+tls+features"}: 2 * FeaturesAllowance,
		{"CREATE", "h2+tls+features"}: 0.5 * FeaturesAllowance, {"UPDATE", "h2+tls+features"}: 0.4 * FeaturesAllowance,
	}
	against := map[Operation]Operation{OpGet: OpEtcdGet, OpList: OpEtcdRange, OpListRV: OpEtcdRange, OpCreate: OpEtcdCreate, OpUpdate: OpEtcdCAS}
	got := Targets()
	if len(got) != len(want) {
		t.Fatalf("%d targets, want %d", len(got), len(want))
	}
	for _, tg := range got {
		ratio, ok := want[[2]string{string(tg.Operation), string(tg.Via)}]
		if !ok || tg.Ratio != ratio {
			t.Errorf("target %+v: want ratio %v (listed: %v)", tg, ratio, ok)
		}
		if tg.Against != against[tg.Operation] {
			t.Errorf("%s is compared with %s, want %s", tg.Operation, tg.Against, against[tg.Operation])
		}
		if tg.Floor() != tg.Ratio/2 {
			t.Errorf("%s floor %v, want half of %v", tg.Operation, tg.Floor(), tg.Ratio)
		}
	}
}

func TestComputeRatios(t *testing.T) {
	results := []Result{
		{Operation: OpEtcdGet, Via: ViaEtcd, Concurrency: 8, PerSecond: 1000},
		{Operation: OpEtcdGet, Via: ViaEtcd, Concurrency: 32, PerSecond: 2000},
		{Operation: OpEtcdRange, Via: ViaEtcd, Concurrency: 8, PerSecond: 0},
		{Operation: OpGet, Via: ViaHTTP1, Concurrency: 8, PerSecond: 900},
		{Operation: OpGet, Via: ViaHTTP2, Concurrency: 32, PerSecond: 500},
		{Operation: OpList, Via: ViaHTTP1, Concurrency: 8, PerSecond: 50},
		// No etcd create was measured at 8: no ratio.
		{Operation: OpCreate, Via: ViaHTTP1, Concurrency: 8, PerSecond: 300},
	}
	got := computeRatios(results, Targets())
	want := []struct {
		op    Operation
		via   Via
		c     int
		value float64
	}{
		{OpGet, ViaHTTP1, 8, 0.9},
		{OpGet, ViaHTTP2, 32, 0.25},
		{OpList, ViaHTTP1, 8, 0},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d ratios %+v, want %d", len(got), got, len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Operation != w.op || g.Via != w.via || g.Concurrency != w.c || g.Value != w.value {
			t.Errorf("ratio %d: %+v, want %s %s %d %v", i, g, w.op, w.via, w.c, w.value)
		}
	}
}

func TestVerdict(t *testing.T) {
	target := Target{Operation: OpGet, Via: ViaHTTP1, Against: OpEtcdGet, Ratio: 0.8}
	tests := []struct {
		server, etcd float64
		want         string
	}{
		{server: 900, etcd: 1000, want: "ok"},
		{server: 800, etcd: 1000, want: "ok"},
		{server: 500, etcd: 1000, want: "below target"},
		{server: 400, etcd: 1000, want: "below target"},
		{server: 399, etcd: 1000, want: "BELOW FLOOR"},
		{server: 900, etcd: 0, want: "no data"},
		{server: 0, etcd: 1000, want: "no data"},
	}
	for _, tt := range tests {
		r := Ratio{Target: target, Server: tt.server, Etcd: tt.etcd}
		if tt.etcd > 0 {
			r.Value = tt.server / tt.etcd
		}
		if got := r.Verdict(); got != tt.want {
			t.Errorf("%v/%v against 0.8: %q, want %q", tt.server, tt.etcd, got, tt.want)
		}
	}
}

func TestCheck(t *testing.T) {
	get := Target{Operation: OpGet, Via: ViaHTTP1, Against: OpEtcdGet, Ratio: 0.8}
	ok := Ratio{Target: get, Concurrency: 8, Server: 900, Etcd: 1000, Value: 0.9}
	belowTarget := Ratio{Target: get, Concurrency: 8, Server: 500, Etcd: 1000, Value: 0.5}
	belowFloor := Ratio{Target: get, Concurrency: 32, Server: 100, Etcd: 1000, Value: 0.1}
	failed := Result{Operation: OpCreate, Via: ViaHTTP2, Concurrency: 8, Requests: 10, Failed: 2, FirstError: "POST x: 500"}
	tests := []struct {
		name    string
		report  Report
		guard   bool
		wantErr []string
	}{
		{name: "all ok, guarded", report: Report{Ratios: []Ratio{ok}}, guard: true},
		{name: "below target is no failure", report: Report{Ratios: []Ratio{belowTarget}}, guard: true},
		{name: "below floor without the guard", report: Report{Ratios: []Ratio{belowFloor}}},
		{name: "below floor with the guard", report: Report{Ratios: []Ratio{ok, belowFloor}}, guard: true,
			wantErr: []string{"GET via http/1.1 at concurrency 32: 0.10× etcd get (100/s vs 1000/s), below the floor 0.40× (half of the target 0.80×)"}},
		{name: "no data with the guard", report: Report{Ratios: []Ratio{{Target: get, Concurrency: 8, Server: 10}}}, guard: true,
			wantErr: []string{"GET via http/1.1 at concurrency 8: 0.00× etcd get"}},
		{name: "failed requests fail without the guard", report: Report{Results: []Result{failed}},
			wantErr: []string{"CREATE via h2+tls at concurrency 8: 2 of 12 requests failed, the first with: POST x: 500"}},
		{name: "an overload answered as it should", report: Report{Overload: &Overload{Clients: 100, OK: 10, TooMany: 90}}},
		// Memory over the allowance and no 429 at all are verdicts in the table, not failed requests.
		{name: "an overload without 429s", report: Report{Overload: &Overload{Clients: 100, OK: 10, IdleRSS: 1, PeakRSS: 1 << 30}}},
		{name: "an overload with other answers", report: Report{Overload: &Overload{Clients: 100, OK: 10, TooMany: 85, Failed: 5, FirstError: "GET x: 500"}},
			wantErr: []string{"overload of 100 clients: 5 of 100 requests failed (neither 200 nor 429 with Retry-After and a TooManyRequests Status), the first with: GET x: 500"}},
		{name: "kubectl skipped", report: Report{Kubectl: &Kubectl{Skipped: "kubectl is not on PATH"}}},
		{name: "kubectl over its target", report: Report{Kubectl: &Kubectl{Warmups: 1, Runs: 1, Get: newTiming([]time.Duration{time.Second}), Target: KubectlTarget}}},
		{name: "kubectl printed a wrong table", report: Report{Kubectl: &Kubectl{Warmups: 1, Runs: 5, Failed: 1, FirstError: "kubectl get: 999 rows"}},
			wantErr: []string{"kubectl: 1 of 18 runs failed, the first with: kubectl get: 999 rows"}},
		{name: "RBAC below its target is a verdict", report: Report{Authz: &Authz{Results: []AuthzResult{{Operation: OpList, AlwaysAllow: 100, RBAC: 10}}}}},
		{name: "authorization comparison with failed requests", report: Report{Authz: &Authz{Results: []AuthzResult{{Operation: OpGet, Failed: 3, FirstError: "GET x: 403"}}}},
			wantErr: []string{"authorization comparison, GET: 3 requests failed, the first with: GET x: 403"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.report.Check(tt.guard)
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestMedian(t *testing.T) {
	tests := []struct {
		in   []time.Duration
		want time.Duration
	}{
		{nil, 0},
		{[]time.Duration{3}, 3},
		{[]time.Duration{9, 1, 5}, 5},
		{[]time.Duration{4, 1, 3, 2}, 2},
	}
	for _, tt := range tests {
		if got := median(tt.in); got != tt.want {
			t.Errorf("median(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
