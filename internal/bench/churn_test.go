package bench

import (
	"strings"
	"testing"
	"time"
)

func TestChurnJudge(t *testing.T) {
	sample := func(cycles int, after time.Duration, mib int64) ChurnSample {
		return ChurnSample{Cycles: cycles, Elapsed: after, RSS: 2 * mib << 20, Anon: mib << 20, File: mib << 20}
	}
	for _, tc := range []struct {
		name     string
		samples  []ChurnSample
		baseline int
		growth   float64
		fails    bool
	}{
		{"history window full at the third reading", []ChurnSample{sample(10, time.Minute, 100), sample(20, 110*time.Second, 150),
			sample(30, 2*time.Minute, 200), sample(40, 3*time.Minute, 210)}, 2, 0.05, false},
		{"growth beyond the bound", []ChurnSample{sample(10, 3*time.Minute, 100), sample(20, 4*time.Minute, 120)}, 0, 0.2, true},
		{"a run shorter than the window judges its last reading", []ChurnSample{sample(10, time.Second, 100), sample(20, 2*time.Second, 300)}, 1, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Churn{Cycles: tc.samples[len(tc.samples)-1].Cycles, Samples: tc.samples}
			c.judge()
			if c.Baseline != tc.baseline || c.Growth < tc.growth-1e-9 || c.Growth > tc.growth+1e-9 {
				t.Errorf("baseline %d growth %v, want %d and %v", c.Baseline, c.Growth, tc.baseline, tc.growth)
			}
			err := (&Report{Churn: c}).Check(false)
			if (err != nil) != tc.fails {
				t.Errorf("Check = %v, want failure %v", err, tc.fails)
			}
			var b strings.Builder
			if err := (&Report{Churn: c}).WriteText(&b); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), "namespace churn") || !strings.Contains(b.String(), "baseline") {
				t.Errorf("report lacks the churn table:\n%s", b.String())
			}
		})
	}
}
