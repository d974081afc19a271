package gcrelax

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestHold(t *testing.T) {
	tests := []struct {
		name          string
		before, while int
	}{
		{name: "GOGC=100 is raised", before: 100, while: Percent},
		{name: "a higher GOGC is kept", before: 800, while: 800},
		{name: "the collector stays off", before: -1, while: -1},
	}
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			debug.SetGCPercent(tt.before)
			var r relaxer
			first := r.hold()
			second := r.hold() // a second holder while the first still holds
			first()
			first() // a second release of the same hold changes nothing
			if got := gcPercent(); got != tt.while {
				t.Errorf("GC percent while one hold is held = %d, want %d", got, tt.while)
			}
			second()
			if got := gcPercent(); got != tt.before {
				t.Errorf("GC percent after both were released = %d, want %d", got, tt.before)
			}
		})
	}
}

func TestHoldWhileSmall(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	tests := []struct {
		name     string
		maxLive  uint64
		released bool // by itself, after collections
	}{
		{name: "a live heap over the bound releases", maxLive: 1, released: true},
		{name: "a live heap under the bound holds", maxLive: 1 << 50, released: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			release := HoldWhileSmall(tt.maxLive)
			defer release()
			if got := gcPercent(); got != Percent {
				t.Fatalf("GC percent once held = %d, want %d", got, Percent)
			}
			want := Percent
			if tt.released {
				want = 100
			}
			// Collections first, so that a hold that should last has had the chance to end; cleanups
			// run on their own goroutine after the collection, so a release is looked for a while.
			for range 3 {
				runtime.GC()
				time.Sleep(5 * time.Millisecond)
			}
			got := gcPercent()
			for deadline := time.Now().Add(2 * time.Second); got != want && time.Now().Before(deadline); got = gcPercent() {
				runtime.GC()
				time.Sleep(5 * time.Millisecond)
			}
			if got != want {
				t.Fatalf("GC percent after collections = %d, want %d", got, want)
			}
			release()
			if got := gcPercent(); got != 100 {
				t.Errorf("GC percent after release = %d, want 100", got)
			}
		})
	}
}

// gcPercent reads the collector's target, which the runtime only returns when setting it.
func gcPercent() int {
	p := debug.SetGCPercent(-1)
	debug.SetGCPercent(p)
	return p
}
