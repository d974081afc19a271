package embedded

import (
	"runtime/debug"
	"sync"
)

// openGCPercent is the collector's target while etcd opens, when GOGC is lower.
//
// Opening rebuilds etcd's key index from every key in the database, decoding each key-value on the
// way: with a million keys, about 1.3 s on two cores that leave behind as much garbage as they keep,
// while the live heap grows from nothing to the whole index. Paced by GOGC=100, the collector runs
// again and again over that growing index (a quarter of the CPU of opening). Collecting four times
// less often while etcd opens made a start with 1,000,000 objects 0.2–0.3 s faster; the heap it lets
// grow is garbage that the next collection, and pkg/memreturn once the server idles, give back.
// GOMEMLIMIT still bounds the heap.
const openGCPercent = 400

// openGC raises the GC target while at least one embedded etcd opens in this process and puts the
// previous one back when the last has opened. The target is the process's, not etcd's: counting
// the openers keeps two concurrent starts (tests, a member rejoining) from restoring each other's
// raised value.
type openGC struct {
	mu      sync.Mutex
	opening int
	saved   int
}

// gcWhileOpening is the process's one openGC, because the collector's target is the process's.
var gcWhileOpening openGC

// relax raises the target unless it is higher already or the collector is off, and returns the
// function that ends this opener's part.
func (g *openGC) relax() (done func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.opening == 0 {
		g.saved = debug.SetGCPercent(openGCPercent)
		if g.saved < 0 || g.saved >= openGCPercent {
			debug.SetGCPercent(g.saved)
		}
	}
	g.opening++
	return func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.opening--; g.opening == 0 {
			debug.SetGCPercent(g.saved)
		}
	}
}
