package namespaces

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeStore holds namespaces and how many objects each has; an object with finalizers stays until
// released.
type fakeStore struct {
	mu sync.Mutex
	// objects counts a namespace's objects; held are those with finalizers, which Empty only marks.
	objects, held map[string]int
	terminating   []string
	// finalizedCh receives each namespace Finalize is called for.
	finalizedCh chan string
	// unreadable is a namespace Terminating cannot decode.
	unreadable string
	changes    chan struct{}
	// watchReturned is set when WatchNamespaces returns.
	watchReturned atomic.Bool
}

func (f *fakeStore) WatchNamespaces(ctx context.Context, changed func()) {
	defer f.watchReturned.Store(true)
	changed()
	<-ctx.Done()
}

func (f *fakeStore) Changes() <-chan struct{} { return f.changes }

func (f *fakeStore) Terminating(context.Context) ([]string, Revision, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var err error
	if f.unreadable != "" {
		err = errors.New("reading namespace " + f.unreadable)
	}
	return slices.Clone(f.terminating), 7, err
}

func (f *fakeStore) Empty(_ context.Context, ns string, at Revision) (bool, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if at != 7 {
		return false, false, errors.New("read at another revision")
	}
	n, held := f.objects[ns], f.held[ns]
	if n == 0 {
		return true, false, nil
	}
	f.objects[ns] = held // one pass deletes all but the held
	return false, n == held, nil
}

func (f *fakeStore) Finalize(_ context.Context, ns string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.finalizedCh <- ns
	f.terminating = slices.DeleteFunc(f.terminating, func(s string) bool { return s == ns })
	return nil
}

func (f *fakeStore) stillTerminating() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.terminating)
}

// awaitFinalized waits until Finalize has been called for each of want, in any order.
func awaitFinalized(t *testing.T, f *fakeStore, want ...string) {
	t.Helper()
	var got []string
	timeout := time.After(10 * time.Second)
	for len(got) < len(want) {
		select {
		case name := <-f.finalizedCh:
			got = append(got, name)
		case <-timeout:
			t.Fatalf("finalized %v, want %v", got, want)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("finalized %v, want %v", got, want)
	}
}

// TestRun: empty namespaces go at once, one with content after its content, one held by an object
// with finalizers only once the object is released; a namespace that cannot be read does not stop
// the others. Run returns only after its watch has stopped.
func TestRun(t *testing.T) {
	f := &fakeStore{
		objects:     map[string]int{"content": 3, "held": 2},
		held:        map[string]int{"held": 1},
		terminating: []string{"empty", "content", "held"},
		unreadable:  "broken",
		changes:     make(chan struct{}, 1),
		finalizedCh: make(chan string, 10),
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(ctx, f, slog.New(slog.NewTextHandler(io.Discard, nil)))
	}()
	awaitFinalized(t, f, "content", "empty")
	if term := f.stillTerminating(); !slices.Equal(term, []string{"held"}) {
		t.Fatalf("terminating %v, want [held]", term)
	}
	// The finalizer is released, and this server says a namespace changed.
	f.mu.Lock()
	f.objects["held"], f.held["held"] = 0, 0
	f.mu.Unlock()
	f.changes <- struct{}{}
	awaitFinalized(t, f, "held")
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	if !f.watchReturned.Load() {
		t.Error("Run returned before its watch did")
	}
}

// TestSweepUnreadable: with no revision to read at, nothing is swept and the error is returned.
func TestSweepUnreadable(t *testing.T) {
	st := &unreadableStore{fakeStore{terminating: []string{"x"}, finalizedCh: make(chan string, 1)}}
	pending, again, err := sweep(context.Background(), st)
	if err == nil || pending || again || len(st.finalizedCh) > 0 {
		t.Errorf("sweep = %v, %v, %v; finalized %d", pending, again, err, len(st.finalizedCh))
	}
}

type unreadableStore struct{ fakeStore }

func (*unreadableStore) Terminating(context.Context) ([]string, Revision, error) {
	return nil, 0, errors.New("etcd is unreachable")
}
