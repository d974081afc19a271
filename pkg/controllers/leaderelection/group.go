package leaderelection

import (
	"context"
	"sync"
)

// Group is a set of named controllers that run together: Run starts each in its goroutine with one
// context and returns once that context ended and every controller returned. Run may be called
// again, with a fresh context, after it returned: controllers keep no state between runs.
type Group struct {
	// OnChange, when set, is told when a controller starts (true) and returns (false).
	OnChange func(name string, running bool)

	mu          sync.Mutex
	controllers []controller
	running     map[string]bool
	// active is the current run's context and goroutines: a controller added while the group runs
	// starts at once.
	active *activeRun
}

type controller struct {
	name string
	run  func(ctx context.Context)
}

type activeRun struct {
	ctx context.Context
	wg  sync.WaitGroup
}

// Add registers a controller under a name of its own. run blocks until its context ends; it may be called again later with a
// new context. Added while the group runs, it starts at once.
func (g *Group) Add(name string, run func(ctx context.Context)) {
	g.mu.Lock()
	defer g.mu.Unlock()
	c := controller{name: name, run: run}
	g.controllers = append(g.controllers, c)
	if g.active != nil && g.active.ctx.Err() == nil {
		g.startLocked(g.active, c)
	}
}

// Names lists the registered controllers in the order they were added.
func (g *Group) Names() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]string, len(g.controllers))
	for i, c := range g.controllers {
		out[i] = c.name
	}
	return out
}

// Running reports whether the named controller runs now.
func (g *Group) Running(name string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.running[name]
}

// Run runs every controller until ctx ends and returns once they all returned.
func (g *Group) Run(ctx context.Context) {
	a := &activeRun{ctx: ctx}
	g.mu.Lock()
	g.active = a
	for _, c := range g.controllers {
		g.startLocked(a, c)
	}
	g.mu.Unlock()
	<-ctx.Done()
	g.mu.Lock()
	g.active = nil // no start after this: Add sees no active run
	g.mu.Unlock()
	a.wg.Wait()
}

func (g *Group) startLocked(a *activeRun, c controller) {
	if g.running == nil {
		g.running = map[string]bool{}
	}
	g.running[c.name] = true
	if g.OnChange != nil {
		g.OnChange(c.name, true)
	}
	a.wg.Go(func() {
		defer func() {
			g.mu.Lock()
			g.running[c.name] = false
			if g.OnChange != nil {
				g.OnChange(c.name, false)
			}
			g.mu.Unlock()
		}()
		c.run(a.ctx)
	})
}
