package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// op performs one request. An error is a failed request: it is counted, never timed; errShed is a
// request the server turned away as it should, counted apart.
type op func(ctx context.Context) error

// errShed is what an op returns for an answer that sheds load the way the server must under
// overload (a 429 with Retry-After and a TooManyRequests Status): neither a success nor a failure.
var errShed = errors.New("turned away with 429 Too Many Requests")

// newWorker prepares worker w (0 <= w < concurrency) and returns the request it repeats. The
// preparation (reading the worker's own object, say) is not measured.
type newWorker func(ctx context.Context, w int) (op, error)

// window says how long a measurement runs: Warmup first (requests run but are not recorded: connections
// open, TLS handshakes finish, caches fill), then Duration during which completed requests count.
type window struct {
	Warmup   time.Duration
	Duration time.Duration
}

// requestTimeout bounds one request: a server that stops answering fails the measurement instead of
// hanging it.
const requestTimeout = 30 * time.Second

// tally is what a measurement saw.
type tally struct {
	// Completed counts the requests that succeeded within the measured window; Latencies holds their
	// durations, sorted.
	Completed int
	Latencies []time.Duration
	// Failed counts failed requests in the measured window; FirstError is the first of them.
	Failed     int
	FirstError error
	// Shed counts the requests in the measured window that the server turned away (errShed).
	Shed int
	// Issued counts every request sent, warm-up and overrun included: allocations observed on the
	// server over the whole run are divided by it.
	Issued int
	// Elapsed is the measured window's length.
	Elapsed time.Duration
}

// PerSecond is the rate of successful requests in the measured window.
func (t tally) PerSecond() float64 {
	if t.Elapsed <= 0 {
		return 0
	}
	return float64(t.Completed) / t.Elapsed.Seconds()
}

// Percentile returns the nearest-rank p-th percentile (0 < p <= 100) of the latencies, 0 if none.
func (t tally) Percentile(p float64) time.Duration {
	return percentile(t.Latencies, p)
}

// percentile takes sorted durations.
func percentile(sorted []time.Duration, p float64) time.Duration {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	// Nearest rank: the smallest value with at least p% of the values at or below it.
	rank := int(float64(n)*p/100 + 0.999999999)
	rank = min(max(rank, 1), n)
	return sorted[rank-1]
}

// workerTally is one worker's share, merged after the run so that workers share nothing while they
// measure.
type workerTally struct {
	latencies []time.Duration
	failed    int
	firstErr  error
	firstAt   time.Time
	shed      int
	issued    int
}

// measure runs concurrency workers for w.Warmup + w.Duration and merges what they saw. It fails only
// when a worker cannot be prepared or ctx ends; failed requests are counted in the tally.
func measure(ctx context.Context, concurrency int, w window, prepare newWorker) (tally, error) {
	if concurrency < 1 {
		return tally{}, fmt.Errorf("concurrency %d: want at least 1", concurrency)
	}
	ops := make([]op, concurrency)
	for i := range ops {
		o, err := prepare(ctx, i)
		if err != nil {
			return tally{}, fmt.Errorf("preparing worker %d: %w", i, err)
		}
		ops[i] = o
	}
	begin := time.Now()
	from := begin.Add(w.Warmup)
	until := from.Add(w.Duration)
	// A request that hangs past the window still ends, so the workers always return.
	runCtx, cancel := context.WithDeadline(ctx, until.Add(requestTimeout))
	defer cancel()
	tallies := make([]workerTally, concurrency)
	var wg sync.WaitGroup
	for i := range ops {
		wg.Go(func() { tallies[i] = runWorker(runCtx, ops[i], from, until) })
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return tally{}, fmt.Errorf("measuring: %w", err)
	}
	return merge(tallies, w.Duration), nil
}

// runWorker repeats o until the window closes, recording requests that end inside [from, until).
func runWorker(ctx context.Context, o op, from, until time.Time) workerTally {
	wt := workerTally{latencies: make([]time.Duration, 0, 1024)}
	for ctx.Err() == nil {
		start := time.Now()
		if !start.Before(until) {
			break
		}
		err := o(ctx)
		end := time.Now()
		wt.issued++
		if end.Before(from) || !end.Before(until) {
			continue
		}
		if errors.Is(err, errShed) {
			wt.shed++
			continue
		}
		if err != nil {
			if wt.failed == 0 {
				wt.firstErr, wt.firstAt = err, end
			}
			wt.failed++
			continue
		}
		wt.latencies = append(wt.latencies, end.Sub(start))
	}
	return wt
}

func merge(tallies []workerTally, elapsed time.Duration) tally {
	t := tally{Elapsed: elapsed}
	n := 0
	for _, wt := range tallies {
		n += len(wt.latencies)
	}
	t.Latencies = make([]time.Duration, 0, n)
	var firstAt time.Time
	for _, wt := range tallies {
		t.Latencies = append(t.Latencies, wt.latencies...)
		t.Failed += wt.failed
		t.Shed += wt.shed
		t.Issued += wt.issued
		if wt.firstErr != nil && (t.FirstError == nil || wt.firstAt.Before(firstAt)) {
			t.FirstError, firstAt = wt.firstErr, wt.firstAt
		}
	}
	slices.Sort(t.Latencies)
	t.Completed = len(t.Latencies)
	return t
}
