package printers

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
)

// TestAppendAge holds AppendAge to Age, and so to apimachinery's HumanDuration, across every branch
// and its edges: each boundary, a second either side, and a sweep in growing steps up to 20 years.
func TestAppendAge(t *testing.T) {
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	ds := []time.Duration{-3 * time.Second, -2 * time.Second, -1999 * time.Millisecond, -time.Second, -1, 0, 999 * time.Millisecond}
	for _, b := range []time.Duration{2 * time.Minute, 10 * time.Minute, 3 * time.Hour, 8 * time.Hour, 48 * time.Hour,
		8 * 24 * time.Hour, 2 * 365 * 24 * time.Hour, 8 * 365 * 24 * time.Hour} {
		for _, off := range []time.Duration{-time.Minute, -time.Second, -1, 0, 1, time.Second, time.Minute, time.Hour} {
			ds = append(ds, b+off)
		}
	}
	for d := time.Duration(1); d < 20*365*24*time.Hour; d = d*9/8 + 1 {
		ds = append(ds, d, d.Truncate(time.Minute), d.Truncate(time.Hour), d.Truncate(24*time.Hour))
	}
	for _, d := range ds {
		created := metav1.NewTime(now.Add(-d))
		if got, want := string(AppendAge([]byte("x"), created, now)), "x"+duration.HumanDuration(d); got != want {
			t.Errorf("age of %v: got %q, want %q", d, got, want)
		}
	}
	if got := string(AppendAge(nil, metav1.Time{}, now)); got != Age(metav1.Time{}, now) {
		t.Errorf("zero time: got %q, want %q", got, Age(metav1.Time{}, now))
	}
}
