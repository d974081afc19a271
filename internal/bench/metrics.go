package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// mallocsMetric counts the heap allocations of the server process (a counter of Go's memstats). The
// server runs on the harness's etcd, so only its own allocations are in it.
const mallocsMetric = "go_memstats_mallocs_total"

// mallocs reads the server's allocation counter from /metrics on the insecure port.
func (s *server) mallocs(ctx context.Context) (float64, error) { return s.metric(ctx, mallocsMetric) }

// heapInuse reads the server's go_memstats_heap_inuse_bytes.
func (s *server) heapInuse(ctx context.Context) (int64, error) {
	v, err := s.metric(ctx, "go_memstats_heap_inuse_bytes")
	return int64(v), err
}

// metric reads one unlabelled sample of the server's /metrics.
func (s *server) metric(ctx context.Context, name string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.insecureURL+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	resp, err := s.probe.Do(req)
	if err != nil {
		return 0, fmt.Errorf("reading the server's metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("reading the server's metrics: %s", resp.Status)
	}
	v, err := parseMetric(resp.Body, name)
	if err != nil {
		return 0, fmt.Errorf("reading the server's metrics: %w", err)
	}
	return v, nil
}

// scrapeCost measures the allocations one /metrics scrape adds to the counter, so that the delta
// between two scrapes around a measurement can leave it out: the smallest of a few back-to-back
// deltas.
func (s *server) scrapeCost(ctx context.Context) (float64, error) {
	prev, err := s.mallocs(ctx)
	if err != nil {
		return 0, err
	}
	cost := -1.0
	for range 5 {
		v, err := s.mallocs(ctx)
		if err != nil {
			return 0, err
		}
		if d := v - prev; cost < 0 || d < cost {
			cost = d
		}
		prev = v
	}
	return cost, nil
}

// parseMetric returns the value of an unlabelled sample of name in the Prometheus text format.
func parseMetric(r io.Reader, name string) (float64, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, name)
		if !ok || rest == "" || (rest[0] != ' ' && rest[0] != '\t') {
			continue
		}
		// A sample is "name value [timestamp]".
		fields := strings.Fields(rest)
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", name, err)
		}
		return v, nil
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no sample of %s", name)
}
