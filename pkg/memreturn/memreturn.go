// Package memreturn gives memory back to the system when a server has gone idle holding much more
// than its live objects.
//
// An idle Go program runs no collection for two minutes, and the runtime's scavenger returns only
// what lies beyond the last collection's goal. A server that has just filled its watch caches (each
// object's etcd response decoded is as much garbage as what is kept), built a graph of every object,
// or answered a burst of requests therefore keeps that memory for as long as nothing else happens:
// with a million objects, RSS stayed 0.3 GiB above the heap's live objects (issue 22). Under load
// nothing is forced: the runtime's own pacing is better there.
package memreturn

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// Config says how often to look and what counts as idle and as worth a collection.
type Config struct {
	// Every is how often the heap is looked at.
	Every time.Duration
	// IdleAllocBytes: a process that allocated less than this since the last look is idle.
	IdleAllocBytes uint64
	// MinSlackBytes: a collection is forced only when the heap holds more than this beyond its live
	// objects. After the first, another is forced only once the process has allocated more than
	// this, and more than a quarter of its live objects, since: an idle server that allocates a
	// little all the time would otherwise pay for a collection of its whole heap every few looks.
	MinSlackBytes uint64
}

// Default is what `apictl serve` uses.
var Default = Config{Every: 5 * time.Second, IdleAllocBytes: 64 << 20, MinSlackBytes: 128 << 20}

// Run looks at the heap every cfg.Every until ctx ends, and forces a collection that returns the
// free memory to the system when the process is idle and holds much more than its live objects.
func Run(ctx context.Context, cfg Config) {
	samples := []metrics.Sample{
		{Name: "/gc/heap/allocs:bytes"},
		{Name: "/gc/heap/live:bytes"},
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"},
		{Name: "/memory/classes/heap/free:bytes"},
	}
	t := time.NewTicker(cfg.Every)
	defer t.Stop()
	metrics.Read(samples)
	lastAllocs := samples[0].Value.Uint64()
	// forcedAt is the allocation count at the last forced collection; 0 until the first.
	var forcedAt uint64
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		metrics.Read(samples)
		allocs := samples[0].Value.Uint64()
		live := samples[1].Value.Uint64()
		held := samples[2].Value.Uint64() + samples[3].Value.Uint64() + samples[4].Value.Uint64()
		idle := allocs-lastAllocs < cfg.IdleAllocBytes
		lastAllocs = allocs
		// Not a quarter of the live heap as the first bar: a server that reports ready before its
		// largest cache has filled (a custom resource of a million objects) ends its start with the
		// last collection's live heap at 1.2 GB and 0.35 GB of garbage, below that bar, kept for good.
		due := forcedAt == 0 || allocs-forcedAt > max(cfg.MinSlackBytes, live/4)
		if idle && due && held > live && held-live > cfg.MinSlackBytes {
			debug.FreeOSMemory()
			forcedAt = allocs
		}
	}
}
