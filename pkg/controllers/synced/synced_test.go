package synced

import (
	"context"
	"reflect"
	"sync/atomic"
	"testing"
	"time"
)

func TestWait(t *testing.T) {
	tests := []struct {
		name      string
		syncAfter int32 // looks until synced; -1 never
		want      bool
	}{
		{"synced at once", 0, true},
		{"synced after a few looks", 3, true},
		{"never synced", -1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			var looks atomic.Int32
			fn := func() bool { return tt.syncAfter >= 0 && looks.Add(1) > tt.syncAfter }
			start := time.Now()
			if got := Wait(ctx, func() bool { return true }, fn); got != tt.want {
				t.Fatalf("Wait = %v, want %v", got, tt.want)
			}
			// client-go's wait would take 100 ms per look; these take Poll.
			if tt.want && time.Since(start) > 100*time.Millisecond {
				t.Errorf("Wait took %v for %d looks", time.Since(start), tt.syncAfter)
			}
		})
	}
}

// factory reports one informer unsynced for its first looks.
type factory struct{ looks, syncAfter int }

func (f *factory) WaitForCacheSync(stop <-chan struct{}) map[reflect.Type]bool {
	select {
	case <-stop:
	default:
		panic("WaitFactory must pass a closed channel, so that the factory looks only once")
	}
	f.looks++
	return map[reflect.Type]bool{reflect.TypeFor[int](): true, reflect.TypeFor[string](): f.looks > f.syncAfter}
}

func TestWaitFactory(t *testing.T) {
	f := &factory{syncAfter: 2}
	res := WaitFactory(context.Background(), f)
	if !res[reflect.TypeFor[string]()] || !res[reflect.TypeFor[int]()] || f.looks != 3 {
		t.Fatalf("WaitFactory = %v after %d looks, want both synced after 3", res, f.looks)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f = &factory{syncAfter: 1 << 30}
	if res := WaitFactory(ctx, f); res[reflect.TypeFor[string]()] {
		t.Fatalf("WaitFactory with an ended context = %v, want the unsynced informer false", res)
	}
}
