// Package gcrelax lets the heap grow to five times its live size between collections, rather than
// GOGC's two, while the process does work that allocates much and keeps much of it: a server
// starting, an embedded etcd opening. The collector's target is the process's, so holds are counted:
// the target goes back to what it was when the last hold is released, whoever took the first.
//
// A server's start collected four or five times before it was ready, and on two cores the collector's
// marking took the CPU the start itself needed: ready took 53–55 ms on an external etcd with the
// default target and 49 ms with GOGC=400. An embedded etcd opening a million keys rebuilds its key
// index from every key, leaving as much garbage as it keeps; collecting four times less often made
// that 0.2–0.3 s faster.
package gcrelax

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// Percent is the collector's target while a hold is held, unless GOGC is higher or the collector
// is off; GOMEMLIMIT still bounds the heap.
const Percent = 400

// relaxer counts the holds on the process's collector target.
type relaxer struct {
	mu      sync.Mutex
	holders int
	saved   int
}

// process is the one relaxer, because the collector's target is the process's.
var process relaxer

// Hold raises the collector's target until release is called; release may be called more than once.
func Hold() (release func()) { return process.hold() }

// HoldWhileSmall holds as Hold does, and releases by itself after the first collection that finds
// more than maxLive bytes live: a start that fills large caches would otherwise let its heap grow
// to five times their size.
func HoldWhileSmall(maxLive uint64) (release func()) {
	held := process.hold()
	var done atomic.Bool
	end := func() {
		if done.CompareAndSwap(false, true) {
			held()
		}
	}
	watchLive(maxLive, &done, end)
	return end
}

func (r *relaxer) hold() (release func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.holders == 0 {
		r.saved = debug.SetGCPercent(Percent)
		if r.saved < 0 || r.saved >= Percent {
			debug.SetGCPercent(r.saved)
		}
	}
	r.holders++
	var once sync.Once
	return func() {
		once.Do(func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			if r.holders--; r.holders == 0 {
				debug.SetGCPercent(r.saved)
			}
		})
	}
}

// sentinel is allocated to become garbage at once: its cleanup runs after the collection that
// found it unreachable. It holds a pointer, so that the tiny allocator does not batch it with
// other objects whose lifetimes would delay that.
type sentinel struct {
	_ *int
	_ [8]byte
}

// watchLive reads the live heap after every collection until done, and calls end once it is
// over maxLive.
func watchLive(maxLive uint64, done *atomic.Bool, end func()) {
	runtime.AddCleanup(&sentinel{}, func(struct{}) {
		switch {
		case done.Load():
		case liveHeap() > maxLive:
			end()
		default:
			watchLive(maxLive, done, end)
		}
	}, struct{}{})
}

// liveHeap is the heap the last collection found live.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
