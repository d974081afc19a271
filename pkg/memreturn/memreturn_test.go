package memreturn

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"testing"
	"time"
)

var sink [][]byte

func forced() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/forced:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestRun checks that a collection is forced to return the garbage a burst left once the process is
// idle, and that none is forced while it allocates.
func TestRun(t *testing.T) {
	for _, tc := range []struct {
		name     string
		idle     uint64
		returned bool
	}{
		{"busy", 0, false}, // never idle: every look sees more than 0 bytes allocated
		{"idle", 16 << 20, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// 192 MiB of garbage, not collected: no collection runs while it is made.
			gc := debug.SetGCPercent(-1)
			for range 192 {
				sink = append(sink, make([]byte, 1<<20))
			}
			sink = nil
			debug.SetGCPercent(gc)
			before := forced()
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			wg.Go(func() {
				Run(ctx, Config{Every: 20 * time.Millisecond, IdleAllocBytes: tc.idle, MinSlackBytes: 64 << 20})
			})
			deadline := time.Now().Add(2 * time.Second)
			got := false
			for !got && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
				got = forced() > before
			}
			cancel()
			wg.Wait()
			if got != tc.returned {
				t.Errorf("forced a collection: %v, want %v", got, tc.returned)
			}
		})
	}
}
