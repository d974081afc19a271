package leaderelection

import (
	"context"
	"slices"
	"sync"
	"testing"

	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// orderLock records the Lease writes among the other steps of a test.
type orderLock struct {
	resourcelock.Interface
	mu    *sync.Mutex
	steps *[]string
}

func (l orderLock) Update(_ context.Context, r resourcelock.LeaderElectionRecord) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	*l.steps = append(*l.steps, "update holder="+r.HolderIdentity)
	return nil
}

// TestReleaseWaitsForTheControllers: client-go releases the Lease when a renewal fails, before it
// cancels the leading context; the release must end the term and wait for its controllers first,
// while a renewal (a holder in the record) goes straight through.
func TestReleaseWaitsForTheControllers(t *testing.T) {
	var mu sync.Mutex
	var steps []string
	record := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		steps = append(steps, s)
	}
	tm := &term{}
	lock := releaseAfterStop{Interface: orderLock{mu: &mu, steps: &steps}, term: tm}
	ctx, done, ok := tm.start(context.Background())
	if !ok {
		t.Fatal("a new term does not start")
	}
	started := make(chan struct{})
	go func() {
		defer close(done)
		close(started)
		<-ctx.Done()
		record("controllers stopped")
	}()
	<-started
	if err := lock.Update(context.Background(), resourcelock.LeaderElectionRecord{HolderIdentity: "me"}); err != nil {
		t.Fatal(err)
	}
	if err := lock.Update(context.Background(), resourcelock.LeaderElectionRecord{}); err != nil {
		t.Fatal(err)
	}
	want := []string{"update holder=me", "controllers stopped", "update holder="}
	if !slices.Equal(steps, want) {
		t.Errorf("steps %q, want %q", steps, want)
	}
	if _, _, ok := tm.start(context.Background()); ok {
		t.Error("the term starts again after its release")
	}
}
