package etcd3

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apictl/apictl/pkg/storage"
)

// A caller never gets the answer of a read that started before it arrived: that read may predate a
// write the caller has seen complete.
func TestRevisionReadsNeverReuseAnEarlierRead(t *testing.T) {
	r := newRevisionReads()
	var started atomic.Int64 // reads begun; a read answers its own sequence number
	release := make(chan struct{})
	read := func(context.Context) (int64, error) {
		n := started.Add(1)
		<-release
		return n, nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	loopDone := make(chan struct{})
	go func() {
		defer close(loopDone)
		r.loop(ctx, read)
	}()
	const callers = 50
	var wg sync.WaitGroup
	errs := make(chan string, callers)
	call := func() {
		defer wg.Done()
		before := started.Load()
		c := r.join()
		<-c.done
		if c.rev <= before {
			errs <- "a caller got the answer of a read that began before it"
		}
	}
	wg.Add(callers)
	for range callers {
		go call()
	}
	// Let reads finish one at a time while callers pile up.
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
			case <-done:
				return
			}
			select {
			case release <- struct{}{}:
			case <-done:
				return
			}
		}
	}()
	wg.Wait()
	close(done)
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if n := started.Load(); n >= callers {
		t.Errorf("%d callers made %d reads: concurrent callers must share them", callers, n)
	}

	// Once the loop has stopped, callers fail at once instead of waiting for a read that never comes.
	cancel()
	<-loopDone
	if c := r.join(); !storage.IsUnavailable(c.err) {
		t.Errorf("a caller after the loop stopped: %v, want Unavailable", c.err)
	}
}

// CurrentRevision is a quorum read: it sees a write that completed before the call, however many
// callers share the read.
func TestCurrentRevisionSeesCompletedWrites(t *testing.T) {
	ctx := testContext(t)
	s := newStore(t, nil, Config{})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 20 {
				kv, err := s.Create(ctx, "configmaps/ns/"+string(rune('a'+i))+string(rune('a'+j)), []byte(`{}`), 0)
				if err != nil {
					t.Error(err)
					return
				}
				rev, err := s.CurrentRevision(ctx)
				if err != nil || rev < kv.ModRevision {
					t.Errorf("current revision %d (%v) is older than a completed write at %d", rev, err, kv.ModRevision)
				}
			}
		}()
	}
	wg.Wait()
}

func TestCurrentRevisionOfClosedStore(t *testing.T) {
	s := newStore(t, nil, Config{})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CurrentRevision(testContext(t)); !storage.IsUnavailable(err) {
		t.Errorf("got %v, want Unavailable", err)
	}
}

// A watch that asks for progress learns that it is current although the change went elsewhere; one
// that does not ask sees nothing.
func TestWatchProgress(t *testing.T) {
	ctx := testContext(t)
	s := newStore(t, nil, Config{})
	with, err := s.Watch(ctx, "configmaps/", storage.WatchOptions{ProgressNotify: true})
	if err != nil {
		t.Fatal(err)
	}
	without, err := s.Watch(ctx, "configmaps/", storage.WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	other, err := s.Create(ctx, "secrets/ns/a", []byte(`{}`), 0)
	if err != nil {
		t.Fatal(err)
	}
	// etcd drops a request while a watch on the stream catches up: ask until the mark comes.
	deadline := time.After(10 * time.Second)
	ask := time.NewTicker(10 * time.Millisecond)
	defer ask.Stop()
	for got := false; !got; {
		if err := s.RequestWatchProgress(ctx); err != nil {
			t.Fatal(err)
		}
		select {
		case ev := <-with:
			if ev.Type != storage.Progress || ev.Revision < other.ModRevision {
				t.Fatalf("got %s, want a progress mark at %d or later", describe(ev), other.ModRevision)
			}
			got = true
		case <-ask.C:
		case <-deadline:
			t.Fatal("no progress mark")
		}
	}
	cm, err := s.Create(ctx, "configmaps/ns/a", []byte(`{}`), 0)
	if err != nil {
		t.Fatal(err)
	}
	if ev := next(t, without); ev.Type != storage.Added || ev.Revision != cm.ModRevision {
		t.Errorf("the watch without progress marks got %s first, want the create", describe(ev))
	}
}
