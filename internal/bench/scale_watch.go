package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apictl/apictl/pkg/certs"
)

// ScaleWatch is many watchers of one namespace's ConfigMaps (HTTP watches from the current
// resourceVersion, over HTTP/2 on the secure port, many streams to a connection), then Events
// ConfigMaps created there one after another, each once every watcher has the one before.
type ScaleWatch struct {
	Watchers int `json:"watchers"`
	Events   int `json:"events"`
	// Established is how long opening every watch took, to the last one's response headers.
	Established time.Duration `json:"establishedNanoseconds"`
	// Before is the server's memory before the watches opened, With once they all were open and had
	// settled; PerWatcher is the RSS difference divided by Watchers. RSS does not grow while the Go
	// heap has room left by earlier work (the LISTs), so HeapPerWatcher divides the difference of
	// go_memstats_heap_inuse_bytes (HeapBefore, HeapWith) too.
	Before         ScaleMemory `json:"before"`
	With           ScaleMemory `json:"with"`
	PerWatcher     int64       `json:"rssPerWatcherBytes"`
	HeapBefore     int64       `json:"heapInuseBeforeBytes"`
	HeapWith       int64       `json:"heapInuseWithBytes"`
	HeapPerWatcher int64       `json:"heapInusePerWatcherBytes"`
	// Delivered events are timed from the create's answer to the event's arrival at the watcher (0
	// when it arrived first); Missed ones did not arrive within scaleDeliveryTimeout.
	Delivered  int           `json:"delivered"`
	Missed     int           `json:"missed"`
	FirstError string        `json:"firstError,omitempty"`
	P50        time.Duration `json:"p50Nanoseconds"`
	P99        time.Duration `json:"p99Nanoseconds"`
	Max        time.Duration `json:"maxNanoseconds"`
}

// Size of the watch measurement.
const (
	// ScaleWatchers is issue 22's number of watchers.
	ScaleWatchers = 10_000
	// ScaleWatchEvents is how many objects are created under the watchers.
	ScaleWatchEvents = 100
	// scaleWatchNamespace is the watched namespace, empty of seeded objects.
	scaleWatchNamespace = "scale-watch"
	// scaleWatchOpening is how many watches are being opened at once.
	scaleWatchOpening = 64
	// scaleDeliveryTimeout bounds the wait for one event to reach every watcher.
	scaleDeliveryTimeout = 30 * time.Second
	// scaleWatchSettle is how long the open watches idle before memory is read.
	scaleWatchSettle = 3 * time.Second
)

// watchName is the name of the i-th object created under the watchers.
func watchName(i int) string { return fmt.Sprintf("watch-%03d", i) }

// watchNeedle precedes the number of a created object in its event's line.
const watchNeedle = `"name":"watch-`

// watchIndex finds the number of the created object an event line carries: -1 for another object.
func watchIndex(line []byte) int {
	at := bytes.Index(line, []byte(watchNeedle))
	if at < 0 {
		return -1
	}
	rest := line[at+len(watchNeedle):]
	end := bytes.IndexByte(rest, '"')
	if end < 0 {
		return -1
	}
	i, err := strconv.Atoi(string(rest[:end]))
	if err != nil {
		return -1
	}
	return i
}

// watchers is the open watches' shared record: when each got each event, and how many got each.
type watchers struct {
	received [][]time.Time // [watcher][event]
	counts   []atomic.Int64
	mu       sync.Mutex
	err      error // the first watch that failed or ended early
}

func (w *watchers) fail(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		w.err = err
	}
}

func (w *watchers) firstError() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// measureWatchers opens ScaleWatchers watches of r's objects in scaleWatchNamespace, creates
// ScaleWatchEvents of them there and times their delivery.
func measureWatchers(ctx context.Context, cfg Config, s *server, r scaleResource) (ScaleWatch, error) {
	sw := ScaleWatch{Watchers: ScaleWatchers, Events: ScaleWatchEvents}
	tlsConfig, err := s.clientTLS(certs.NameAdmin)
	if err != nil {
		return sw, err
	}
	t := newTransport(scaleWatchOpening)
	t.TLSClientConfig = tlsConfig
	t.Protocols.SetHTTP2(true)
	client := &http.Client{Transport: t}
	defer client.CloseIdleConnections()
	h := httpTarget{client: client, base: s.secureURL, protoMajor: 2}

	var buf bytes.Buffer
	path := r.collection(scaleWatchNamespace)
	// What an earlier run on the same data (Config.ScaleData) created goes first.
	if err := h.do(ctx, http.MethodDelete, path, nil, http.StatusOK, nil); err != nil {
		return sw, fmt.Errorf("emptying the watched namespace: %w", err)
	}
	if err := h.do(ctx, http.MethodGet, path+"?limit=1", nil, http.StatusOK, &buf); err != nil {
		return sw, fmt.Errorf("reading the watched namespace's resourceVersion: %w", err)
	}
	var list struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(buf.Bytes(), &list); err != nil {
		return sw, fmt.Errorf("reading the watched namespace's resourceVersion: %w", err)
	}
	if sw.Before, err = s.scaleMemory(); err != nil {
		return sw, err
	}
	if sw.HeapBefore, err = s.heapInuse(ctx); err != nil {
		return sw, err
	}

	ws := &watchers{received: make([][]time.Time, sw.Watchers), counts: make([]atomic.Int64, sw.Events)}
	watchCtx, stopWatches := context.WithCancel(ctx)
	var wg sync.WaitGroup
	// However the measurement ends, the watches stop and their goroutines are awaited.
	defer func() {
		stopWatches()
		wg.Wait()
	}()
	watchURL := s.secureURL + path + "?watch=true&resourceVersion=" + list.Metadata.ResourceVersion
	began := time.Now()
	opened := make(chan error, sw.Watchers)
	opening := make(chan struct{}, scaleWatchOpening)
	for w := range sw.Watchers {
		ws.received[w] = make([]time.Time, sw.Events)
		select {
		case opening <- struct{}{}:
		case <-ctx.Done():
			return sw, ctx.Err()
		}
		wg.Go(func() { watch(watchCtx, client, watchURL, ws, ws.received[w], opened, opening) })
	}
	for range sw.Watchers {
		select {
		case err := <-opened:
			if err != nil {
				return sw, fmt.Errorf("opening %d watches: %w", sw.Watchers, err)
			}
		case <-ctx.Done():
			return sw, ctx.Err()
		}
	}
	sw.Established = time.Since(began)
	cfg.Logger.Info("scale: watches open", "watchers", sw.Watchers, "took", sw.Established)
	if err := sleep(ctx, scaleWatchSettle); err != nil {
		return sw, err
	}
	if sw.With, err = s.scaleMemory(); err != nil {
		return sw, err
	}
	if sw.HeapWith, err = s.heapInuse(ctx); err != nil {
		return sw, err
	}
	sw.PerWatcher = (sw.With.RSS - sw.Before.RSS) / int64(sw.Watchers)
	sw.HeapPerWatcher = (sw.HeapWith - sw.HeapBefore) / int64(sw.Watchers)

	acked := make([]time.Time, sw.Events)
	for i := range sw.Events {
		body := r.object(scaleWatchNamespace, watchName(i), i)
		if err := h.do(ctx, http.MethodPost, path, body, http.StatusCreated, nil); err != nil {
			return sw, fmt.Errorf("creating under the watchers: %w", err)
		}
		acked[i] = time.Now()
		if err := waitDelivered(ctx, &ws.counts[i], int64(sw.Watchers)); err != nil {
			return sw, err
		}
	}
	stopWatches()
	wg.Wait()
	latencies := deliveries(ws.received, acked)
	sw.Delivered = len(latencies)
	sw.Missed = sw.Watchers*sw.Events - sw.Delivered
	if err := ws.firstError(); err != nil {
		sw.FirstError = err.Error()
	} else if sw.Missed > 0 {
		sw.FirstError = "events missing from open watches"
	}
	sw.P50, sw.P99 = percentile(latencies, 50), percentile(latencies, 99)
	if len(latencies) > 0 {
		sw.Max = latencies[len(latencies)-1]
	}
	cfg.Logger.Info("scale: watch events delivered", "delivered", sw.Delivered, "missed", sw.Missed, "p99", sw.P99,
		"rssPerWatcher", sw.PerWatcher, "heapPerWatcher", sw.HeapPerWatcher)
	return sw, nil
}

// watch opens one watch, says so on opened (freeing its place in opening), and records the arrival
// of each created object's event in received until ctx ends.
func watch(ctx context.Context, client *http.Client, url string, ws *watchers, received []time.Time, opened chan<- error, opening <-chan struct{}) {
	resp, err := openWatch(ctx, client, url)
	<-opening
	opened <- err
	if err != nil {
		return
	}
	defer resp.Body.Close()
	r := bufio.NewReaderSize(resp.Body, 4<<10)
	for {
		line, err := r.ReadSlice('\n')
		if i := watchIndex(line); i >= 0 && i < len(received) && received[i].IsZero() {
			received[i] = time.Now()
			ws.counts[i].Add(1)
		}
		switch {
		case err == nil, errors.Is(err, bufio.ErrBufferFull):
		case ctx.Err() != nil:
			return
		default:
			ws.fail(fmt.Errorf("a watch ended early: %w", err))
			return
		}
	}
}

// openWatch sends a watch request and returns its answer once the headers are in.
func openWatch(ctx context.Context, client *http.Client, url string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK || resp.ProtoMajor != 2 {
		drain(resp)
		return nil, fmt.Errorf("watch answered %s over %s, want 200 over HTTP/2", resp.Status, resp.Proto)
	}
	return resp, nil
}

// waitDelivered waits until count reaches want, or scaleDeliveryTimeout has passed: the events
// still missing then are counted as missed.
func waitDelivered(ctx context.Context, count *atomic.Int64, want int64) error {
	deadline := time.Now().Add(scaleDeliveryTimeout)
	for count.Load() < want && time.Now().Before(deadline) {
		if err := sleep(ctx, time.Millisecond); err != nil {
			return err
		}
	}
	return nil
}

// deliveries turns arrival times into sorted latencies from each event's acknowledgement; an event
// that came before its create's answer counts as 0, one that never came not at all.
func deliveries(received [][]time.Time, acked []time.Time) []time.Duration {
	var out []time.Duration
	for _, r := range received {
		for i, at := range r {
			if at.IsZero() || i >= len(acked) {
				continue
			}
			out = append(out, max(at.Sub(acked[i]), 0))
		}
	}
	slices.Sort(out)
	return out
}
