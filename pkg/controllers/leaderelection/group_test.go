package leaderelection

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestGroupRunsAllAndWaits(t *testing.T) {
	var g Group
	var changes sync.Map
	g.OnChange = func(name string, running bool) { changes.Store(name, running) }
	var starts, lateStarts, returned atomic.Int32
	for _, name := range []string{"namespace", "garbage-collector"} {
		g.Add(name, func(ctx context.Context) {
			starts.Add(1)
			<-ctx.Done()
			time.Sleep(100 * time.Millisecond) // a controller that takes a while to stop
			returned.Add(1)
		})
	}
	if got := g.Names(); !slices.Equal(got, []string{"namespace", "garbage-collector"}) {
		t.Fatalf("Names() = %v", got)
	}
	for term := 1; term <= 2; term++ {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			g.Run(ctx)
		}()
		eventually(t, time.Second, "both controllers start", func() bool { return starts.Load() == int32(2*term) })
		if !g.Running("namespace") || !g.Running("garbage-collector") {
			t.Fatal("Running() says a started controller does not run")
		}
		if on, _ := changes.Load("namespace"); on != true {
			t.Fatal("OnChange was not told the controller started")
		}
		// One added while the group runs starts at once, is waited for too, and runs in the next
		// term with the others.
		if term == 1 {
			g.Add("late", func(ctx context.Context) {
				lateStarts.Add(1)
				<-ctx.Done()
				time.Sleep(100 * time.Millisecond)
				returned.Add(1)
			})
		}
		eventually(t, time.Second, "the late controller starts", func() bool { return lateStarts.Load() == int32(term) })
		cancel()
		<-done
		if want := int32(3 * term); returned.Load() != want {
			t.Fatalf("term %d: Run returned with %d controllers returned, want %d", term, returned.Load(), want)
		}
		if g.Running("namespace") || g.Running("late") {
			t.Fatal("Running() says a returned controller runs")
		}
		if on, _ := changes.Load("namespace"); on != false {
			t.Fatal("OnChange was not told the controller returned")
		}
	}
}

func TestGroupAddAfterRunDoesNotStart(t *testing.T) {
	var g Group
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	g.Run(ctx)
	var ran atomic.Bool
	g.Add("x", func(context.Context) { ran.Store(true) })
	time.Sleep(50 * time.Millisecond)
	if ran.Load() || g.Running("x") {
		t.Fatal("a controller added outside a run started")
	}
}
