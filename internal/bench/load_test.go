package bench

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	ms := func(ns ...int) []time.Duration {
		out := make([]time.Duration, len(ns))
		for i, n := range ns {
			out[i] = time.Duration(n) * time.Millisecond
		}
		return out
	}
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(i+1) * time.Millisecond
	}
	tests := []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{name: "empty", sorted: nil, p: 50, want: 0},
		{name: "one value is every percentile", sorted: ms(7), p: 99, want: 7 * time.Millisecond},
		{name: "median of an odd count", sorted: ms(1, 2, 3), p: 50, want: 2 * time.Millisecond},
		{name: "median of an even count is the lower middle", sorted: ms(1, 2, 3, 4), p: 50, want: 2 * time.Millisecond},
		{name: "p99 of 100 values", sorted: hundred, p: 99, want: 99 * time.Millisecond},
		{name: "p50 of 100 values", sorted: hundred, p: 50, want: 50 * time.Millisecond},
		{name: "p100 is the maximum", sorted: hundred, p: 100, want: 100 * time.Millisecond},
		{name: "p99 of 10 values is the maximum", sorted: ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), p: 99, want: 10 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := percentile(tt.sorted, tt.p); got != tt.want {
				t.Errorf("percentile(%v, %v) = %v, want %v", tt.sorted, tt.p, got, tt.want)
			}
		})
	}
}

func TestMeasureCountsSuccessesAndFailures(t *testing.T) {
	var calls atomic.Int64
	errOdd := errors.New("odd request")
	prepared := make([]bool, 4)
	tl, err := measure(context.Background(), 4, window{Warmup: 10 * time.Millisecond, Duration: 200 * time.Millisecond},
		func(_ context.Context, w int) (op, error) {
			prepared[w] = true
			return func(context.Context) error {
				if calls.Add(1)%2 == 1 {
					return errOdd
				}
				time.Sleep(time.Millisecond)
				return nil
			}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	for w, ok := range prepared {
		if !ok {
			t.Errorf("worker %d was not prepared", w)
		}
	}
	if tl.Completed == 0 || tl.Failed == 0 {
		t.Fatalf("completed %d, failed %d: want both", tl.Completed, tl.Failed)
	}
	if !errors.Is(tl.FirstError, errOdd) {
		t.Errorf("first error %v, want %v", tl.FirstError, errOdd)
	}
	if len(tl.Latencies) != tl.Completed {
		t.Errorf("%d latencies for %d completed requests", len(tl.Latencies), tl.Completed)
	}
	if tl.Issued != int(calls.Load()) || tl.Issued < tl.Completed+tl.Failed {
		t.Errorf("issued %d, calls %d, completed+failed %d", tl.Issued, calls.Load(), tl.Completed+tl.Failed)
	}
	for i := 1; i < len(tl.Latencies); i++ {
		if tl.Latencies[i] < tl.Latencies[i-1] {
			t.Fatal("latencies are not sorted")
		}
	}
	if tl.Latencies[0] < time.Millisecond {
		t.Errorf("a successful request took %v, less than the op's own sleep", tl.Latencies[0])
	}
	if tl.Elapsed != 200*time.Millisecond {
		t.Errorf("elapsed %v, want the window's 200ms", tl.Elapsed)
	}
}

func TestMeasureWarmupIsNotRecorded(t *testing.T) {
	// Every request outlasts the warm-up and the measured window after it: none ends inside the
	// window, so nothing is recorded, but each is issued.
	tl, err := measure(context.Background(), 2, window{Warmup: 5 * time.Millisecond, Duration: time.Nanosecond},
		func(context.Context, int) (op, error) {
			return func(context.Context) error { time.Sleep(20 * time.Millisecond); return nil }, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if tl.Completed != 0 || tl.Failed != 0 {
		t.Errorf("completed %d, failed %d: want nothing recorded", tl.Completed, tl.Failed)
	}
	// A worker scheduled only after the window closed issues nothing.
	if tl.Issued > 2 {
		t.Errorf("issued %d, want at most one per worker", tl.Issued)
	}
}

func TestMeasureFails(t *testing.T) {
	noop := func(context.Context, int) (op, error) { return func(context.Context) error { return nil }, nil }
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name        string
		ctx         context.Context
		concurrency int
		prepare     newWorker
		want        string
	}{
		{name: "no workers", ctx: context.Background(), concurrency: 0, prepare: noop, want: "concurrency 0"},
		{name: "a worker cannot prepare", ctx: context.Background(), concurrency: 3, want: "preparing worker 2: no object",
			prepare: func(ctx context.Context, w int) (op, error) {
				if w == 2 {
					return nil, errors.New("no object")
				}
				return noop(ctx, w)
			}},
		{name: "context ended", ctx: canceled, concurrency: 1, prepare: noop, want: "context canceled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := measure(tt.ctx, tt.concurrency, window{Duration: time.Millisecond}, tt.prepare)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestTallyPerSecond(t *testing.T) {
	tests := []struct {
		tally tally
		want  float64
	}{
		{tally{Completed: 500, Elapsed: 2 * time.Second}, 250},
		{tally{Completed: 3, Elapsed: 0}, 0},
	}
	for _, tt := range tests {
		if got := tt.tally.PerSecond(); got != tt.want {
			t.Errorf("%d in %v: %v/s, want %v", tt.tally.Completed, tt.tally.Elapsed, got, tt.want)
		}
	}
}

func TestParallel(t *testing.T) {
	t.Run("runs every index once", func(t *testing.T) {
		seen := make([]atomic.Int32, 100)
		if err := parallel(context.Background(), len(seen), 7, func(_ context.Context, i int) error {
			seen[i].Add(1)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		for i := range seen {
			if n := seen[i].Load(); n != 1 {
				t.Errorf("index %d ran %d times", i, n)
			}
		}
	})
	t.Run("stops at the first error", func(t *testing.T) {
		boom := errors.New("boom")
		var ran atomic.Int32
		err := parallel(context.Background(), 1000, 2, func(_ context.Context, i int) error {
			ran.Add(1)
			if i == 3 {
				return boom
			}
			return nil
		})
		if !errors.Is(err, boom) {
			t.Errorf("error %v, want %v", err, boom)
		}
		if ran.Load() == 1000 {
			t.Error("every index ran after the error")
		}
	})
}
