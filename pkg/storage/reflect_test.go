package storage

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"
)

// listCounter is a store whose only call here is List; it counts them.
type listCounter struct {
	Store
	lists atomic.Int64
}

func (s *listCounter) List(context.Context, string, ListOptions) (*ListResult, error) {
	s.lists.Add(1)
	return &ListResult{Items: []KeyValue{{Key: "configmaps/a/b"}}, Revision: 7}, nil
}

// fillingStore is a listCounter that fills itself first, as a watch cache does.
type fillingStore struct {
	listCounter
	ready chan struct{}
}

func (s *fillingStore) Ready() <-chan struct{} { return s.ready }

// TestReflectWaitsForAFiller: a store that fills itself is listed only once it is ready (before, its
// list would be a second full read of etcd), and Reflect gives up with its context; any other store
// is listed at once.
func TestReflectWaitsForAFiller(t *testing.T) {
	tests := []struct {
		name string
		// filler makes the store a Filler that is not ready yet.
		filler bool
		// readyAfter closes its Ready channel after this long; 0 never.
		readyAfter time.Duration
		wantLists  int64
	}{
		{name: "plain store", wantLists: 1},
		{name: "filler becomes ready", filler: true, readyAfter: 20 * time.Millisecond, wantLists: 1},
		{name: "filler never ready", filler: true, wantLists: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			var store Store
			var counter *listCounter
			var ready chan struct{}
			if tt.filler {
				f := &fillingStore{ready: make(chan struct{})}
				store, counter, ready = f, &f.listCounter, f.ready
			} else {
				counter = &listCounter{}
				store = counter
			}
			var readyAt atomic.Int64
			if tt.readyAfter > 0 {
				timer := time.AfterFunc(tt.readyAfter, func() {
					readyAt.Store(time.Now().UnixNano())
					close(ready)
				})
				defer timer.Stop()
			}
			var handled atomic.Int64
			Reflect(ctx, store, "configmaps/", func(reset bool, items []KeyValue, deleted bool) bool {
				if tt.filler && readyAt.Load() == 0 {
					t.Error("the store was listed before it was ready")
				}
				if !reset || len(items) != 1 {
					t.Errorf("handed reset=%v with %d items, want the list", reset, len(items))
				}
				handled.Add(1)
				return false
			}, slog.New(slog.DiscardHandler))
			if got := counter.lists.Load(); got != tt.wantLists || handled.Load() != tt.wantLists {
				t.Errorf("%d list(s), %d handled; want %d", got, handled.Load(), tt.wantLists)
			}
		})
	}
}
