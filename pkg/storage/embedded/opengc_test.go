package embedded

import (
	"runtime/debug"
	"testing"
)

func TestOpenGC(t *testing.T) {
	tests := []struct {
		name          string
		before, while int
	}{
		{name: "GOGC=100 is raised", before: 100, while: openGCPercent},
		{name: "a higher GOGC is kept", before: 800, while: 800},
		{name: "the collector stays off", before: -1, while: -1},
	}
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			debug.SetGCPercent(tt.before)
			var g openGC
			first := g.relax()
			second := g.relax() // a second start while the first still opens
			first()
			if got := gcPercent(); got != tt.while {
				t.Errorf("GC percent while one start still opens = %d, want %d", got, tt.while)
			}
			second()
			if got := gcPercent(); got != tt.before {
				t.Errorf("GC percent after both opened = %d, want %d", got, tt.before)
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
