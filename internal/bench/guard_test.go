package bench

import (
	"reflect"
	"testing"
)

func TestFloored(t *testing.T) {
	get := Target{Operation: OpGet, Via: ViaHTTP1, Against: OpEtcdGet, Ratio: 0.8}
	update := Target{Operation: OpUpdate, Via: ViaHTTP2, Against: OpEtcdCAS, Ratio: 0.4}
	tests := []struct {
		name   string
		ratios []Ratio
		want   []Operation
	}{
		{name: "none", ratios: nil},
		{name: "below target only", ratios: []Ratio{{Target: get, Concurrency: 8, Server: 7, Etcd: 10, Value: 0.7}}},
		{name: "below floor, each once", ratios: []Ratio{
			{Target: update, Concurrency: 8, Server: 1, Etcd: 10, Value: 0.1},
			{Target: get, Concurrency: 8, Server: 9, Etcd: 10, Value: 0.9},
			{Target: update, Concurrency: 32, Server: 1, Etcd: 10, Value: 0.1},
			{Target: get, Concurrency: 32, Server: 1, Etcd: 0},
		}, want: []Operation{OpUpdate, OpGet}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Report{Ratios: tt.ratios}
			if got := r.Floored(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Floored() = %v, want %v", got, tt.want)
			}
		})
	}
}

// report builds a run of UPDATE at one concurrency over both paths against etcd's CAS.
func report(c int, cas, h1, h2 float64) *Report {
	results := []Result{
		{Operation: OpEtcdCAS, Via: ViaEtcd, Concurrency: c, PerSecond: cas},
		{Operation: OpUpdate, Via: ViaHTTP1, Concurrency: c, PerSecond: h1},
		{Operation: OpUpdate, Via: ViaHTTP2, Concurrency: c, PerSecond: h2},
	}
	return &Report{Results: results, Ratios: computeRatios(results, Targets())}
}

func TestKeepBest(t *testing.T) {
	tests := []struct {
		name     string
		first    *Report
		again    []*Report
		wantRate map[Via]float64 // per path, the server rate kept
		wantEtcd float64
		wantTry  int
	}{
		{
			name:  "a better attempt replaces every path and its etcd rate",
			first: report(8, 1000, 300, 100), again: []*Report{report(8, 900, 330, 300)},
			wantRate: map[Via]float64{ViaHTTP1: 330, ViaHTTP2: 300}, wantEtcd: 900, wantTry: 2,
		},
		{
			// Judged by the worst path: h2 is 0.10 first and 0.11 again, though h1 fell.
			name:  "the worst path decides",
			first: report(8, 1000, 500, 100), again: []*Report{report(8, 1000, 300, 110)},
			wantRate: map[Via]float64{ViaHTTP1: 300, ViaHTTP2: 110}, wantEtcd: 1000, wantTry: 2,
		},
		{
			name:  "a worse attempt is only counted",
			first: report(8, 1000, 300, 150), again: []*Report{report(8, 1000, 300, 100), report(8, 1000, 200, 120)},
			wantRate: map[Via]float64{ViaHTTP1: 300, ViaHTTP2: 150}, wantEtcd: 1000, wantTry: 3,
		},
		{
			name:  "another concurrency is left alone",
			first: report(8, 1000, 300, 100), again: []*Report{report(32, 1000, 900, 900)},
			wantRate: map[Via]float64{ViaHTTP1: 300, ViaHTTP2: 100}, wantEtcd: 1000, wantTry: 0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.first
			for _, a := range tt.again {
				r.KeepBest(a)
			}
			for _, res := range r.Results {
				switch {
				case res.Via == ViaEtcd && res.PerSecond != tt.wantEtcd:
					t.Errorf("etcd rate %v, want %v", res.PerSecond, tt.wantEtcd)
				case res.Via != ViaEtcd && res.PerSecond != tt.wantRate[res.Via]:
					t.Errorf("%s rate %v, want %v", res.Via, res.PerSecond, tt.wantRate[res.Via])
				}
			}
			for _, ra := range r.Ratios {
				if ra.Server != tt.wantRate[ra.Via] || ra.Etcd != tt.wantEtcd || ra.Value != ra.Server/ra.Etcd {
					t.Errorf("%s ratio %v = %v/%v, want from %v/%v", ra.Via, ra.Value, ra.Server, ra.Etcd, tt.wantRate[ra.Via], tt.wantEtcd)
				}
				if ra.Attempts != tt.wantTry {
					t.Errorf("%s attempts %d, want %d", ra.Via, ra.Attempts, tt.wantTry)
				}
			}
		})
	}
}
