package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"slices"
	"sync"
	"time"
)

// ScaleList is one or more unpaged LISTs of every seeded object run at once (as JSON),
// timed to the first byte and to the last, with the server's memory around them.
type ScaleList struct {
	Clients int `json:"clients"`
	// FirstByte and Took are the slowest client's.
	FirstByte time.Duration `json:"firstByteNanoseconds"`
	Took      time.Duration `json:"tookNanoseconds"`
	// Bytes is the size of one list; Items how many seeded objects it held.
	Bytes int64 `json:"bytes"`
	Items int   `json:"items"`
	// Peak is the largest RSS read every 50 ms while the lists ran (Samples readings).
	Peak    int64 `json:"peakRSSBytes"`
	Samples int   `json:"samples"`
	// After is the memory AfterDelay after the lists ended.
	After      ScaleMemory   `json:"after"`
	AfterDelay time.Duration `json:"afterDelayNanoseconds"`
	// Returned, when set, is how long after the lists ended RSS first came within ScaleReturnTarget
	// of idle (read every second); unset when it did not within AfterDelay. Only concurrent lists
	// watch for it, for ScaleReturnWait, or in CI's guarded version until it returns, which the
	// guards do not judge.
	Returned *time.Duration `json:"returnedNanoseconds,omitempty"`
}

// ScaleGets is a client reading random seeded ConfigMaps by name, one after another, while the
// concurrent LISTs run.
type ScaleGets struct {
	Requests   int           `json:"requests"`
	Failed     int           `json:"failed"`
	FirstError string        `json:"firstError,omitempty"`
	P50        time.Duration `json:"p50Nanoseconds"`
	P99        time.Duration `json:"p99Nanoseconds"`
	Max        time.Duration `json:"maxNanoseconds"`
	// Attempts, when more than 1, is how many rounds of concurrent LISTs CI's guarded version ran
	// to get a GET p99 within its guard, keeping the best round (see GuardAttempts): the few GETs
	// of a round that takes a fraction of a second make its p99 their slowest.
	Attempts int `json:"attempts,omitempty"`
}

// ScalePaged is a LIST of every ConfigMap in pages of ScalePageSize, following continue tokens, each
// page timed to its last byte.
type ScalePaged struct {
	Limit int           `json:"limit"`
	Pages int           `json:"pages"`
	Items int           `json:"items"`
	Took  time.Duration `json:"tookNanoseconds"`
	Mean  time.Duration `json:"meanNanoseconds"`
	First time.Duration `json:"firstNanoseconds"`
	Last  time.Duration `json:"lastNanoseconds"`
}

// scaleListTimeout bounds one unpaged LIST, however slow the server is at listing a million objects.
const scaleListTimeout = 10 * time.Minute

// measureScaleLists runs one unpaged LIST, and then ScaleListClients at once with a client reading
// by name meanwhile, into sc.
func measureScaleLists(ctx context.Context, cfg Config, s *server, r scaleResource, sc *Scale) error {
	// A client per list, so that each has a connection of its own, and one for the GETs.
	h, err := s.target(ViaHTTP1, ScaleListClients+1)
	if err != nil {
		return err
	}
	defer h.client.CloseIdleConnections()
	compact := representationOf(ReprJSON)
	if sc.List, err = scaleLists(ctx, s, h, r, compact, 1, sc.Objects, nil); err != nil {
		return err
	}
	if err := sleep(ctx, ScaleIdleWait); err != nil {
		return err
	}
	if sc.List.After, err = s.scaleMemory(); err != nil {
		return err
	}
	sc.List.AfterDelay = ScaleIdleWait
	cfg.Logger.Info("scale: unpaged LIST", "firstByte", sc.List.FirstByte, "took", sc.List.Took, "bytes", sc.List.Bytes,
		"peak", formatBytes(sc.List.Peak), "after", formatBytes(sc.List.After.RSS))

	if sc.Lists, sc.Gets, err = concurrentLists(ctx, cfg, s, h, r, sc, compact); err != nil {
		return err
	}
	cfg.Logger.Info("scale: concurrent unpaged LISTs", "clients", ScaleListClients, "firstByte", sc.Lists.FirstByte, "took", sc.Lists.Took,
		"peak", formatBytes(sc.Lists.Peak), "getP99", sc.Gets.P99)
	if sc.Lists.After, sc.Lists.AfterDelay, sc.Lists.Returned, err = waitReturned(ctx, s, sc); err != nil {
		return err
	}
	cfg.Logger.Info("scale: after the concurrent LISTs", "after", sc.Lists.AfterDelay.Round(time.Second), "rss", formatBytes(sc.Lists.After.RSS))
	reprs, err := validRepresentations(cfg.ScaleRepresentations)
	if err != nil {
		return err
	}
	for _, name := range reprs[1:] {
		m, err := measureRepresentation(ctx, cfg, s, h, r, sc, representationOf(name))
		if err != nil {
			return err
		}
		sc.Representations = append(sc.Representations, m)
	}
	return nil
}

// scaleLists runs clients unpaged LISTs at once while the server's RSS is sampled, and, when gets is
// given, a client reading by name until they end.
func scaleLists(ctx context.Context, s *server, h httpTarget, r scaleResource, repr representation, clients, objects int, gets *ScaleGets) (ScaleList, error) {
	l := ScaleList{Clients: clients}
	timings := make([]listTiming, clients)
	var getLatencies []time.Duration
	var err error
	l.Peak, l.Samples, err = s.sampleRSSWhile(ctx, func() error {
		listCtx, cancel := context.WithTimeout(ctx, scaleListTimeout)
		defer cancel()
		getCtx, stopGets := context.WithCancel(listCtx)
		var wg sync.WaitGroup
		if gets != nil {
			// The GETs' connection opens before the lists start: what is timed is the answers.
			if err := h.do(ctx, http.MethodGet, r.collection(scaleNamespace(0))+"/"+r.name(0), nil, http.StatusOK, nil); err != nil {
				stopGets()
				return fmt.Errorf("reading a seeded object: %w", err)
			}
			wg.Go(func() { getLatencies = getWhile(getCtx, h, r, objects, gets) })
		}
		errs := make([]error, clients)
		var lists sync.WaitGroup
		for i := range clients {
			lists.Go(func() {
				timings[i], errs[i] = timeList(listCtx, h, r.all+repr.query, repr.accept, repr.needle(r.prefix))
			})
		}
		lists.Wait()
		stopGets()
		wg.Wait()
		return errors.Join(errs...)
	})
	if err != nil {
		return l, fmt.Errorf("%d unpaged LISTs: %w", clients, err)
	}
	for _, t := range timings {
		l.FirstByte, l.Took = max(l.FirstByte, t.firstByte), max(l.Took, t.took)
		l.Bytes, l.Items = t.bytes, t.items
		if t.items != objects {
			return l, fmt.Errorf("an unpaged LIST held %d seeded objects, want %d", t.items, objects)
		}
	}
	if gets != nil {
		slices.Sort(getLatencies)
		gets.P50, gets.P99 = percentile(getLatencies, 50), percentile(getLatencies, 99)
		if len(getLatencies) > 0 {
			gets.Max = getLatencies[len(getLatencies)-1]
		}
	}
	return l, nil
}

// listTiming is one unpaged LIST.
type listTiming struct {
	firstByte, took time.Duration
	bytes           int64
	items           int
}

// timeList GETs path and reads the answer to its end, counting the seeded objects in it.
func timeList(ctx context.Context, h httpTarget, path, accept string, needle []byte) (listTiming, error) {
	var t listTiming
	var firstByte time.Time
	trace := &httptrace.ClientTrace{GotFirstResponseByte: func() { firstByte = time.Now() }}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodGet, h.base+path, nil)
	if err != nil {
		return t, err
	}
	req.Header.Set("Accept", accept)
	began := time.Now()
	resp, err := h.client.Do(req)
	if err != nil {
		return t, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return t, &statusError{Method: http.MethodGet, Path: path, Code: resp.StatusCode, Want: http.StatusOK, Body: string(bytes.TrimSpace(msg))}
	}
	counter := &needleCounter{needle: needle}
	if t.bytes, err = io.Copy(counter, resp.Body); err != nil {
		return t, fmt.Errorf("GET %s: reading the list after %d bytes: %w", path, t.bytes, err)
	}
	t.took, t.firstByte, t.items = time.Since(began), firstByte.Sub(began), counter.n
	return t, nil
}

// needleCounter counts the occurrences of needle in what is written to it, across writes.
type needleCounter struct {
	needle []byte
	// tail holds the last len(needle)-1 bytes written, where an occurrence may have begun.
	tail []byte
	n    int
}

func (c *needleCounter) Write(p []byte) (int, error) {
	k := len(c.needle) - 1
	if len(c.tail) > 0 {
		// Occurrences that start in the tail: the tail joined with p's first k bytes.
		joined := append(c.tail[:len(c.tail):len(c.tail)], p[:min(k, len(p))]...)
		c.n += bytes.Count(joined, c.needle)
	}
	c.n += bytes.Count(p, c.needle)
	// Keep the last k bytes of everything written so far.
	c.tail = append(c.tail, p...)
	if len(c.tail) > k {
		c.tail = append(c.tail[:0], c.tail[len(c.tail)-k:]...)
	}
	return len(p), nil
}

// getWhile reads random seeded objects by name, one after another, until ctx ends, and returns
// the latencies of those that succeeded; failures are counted in gets.
func getWhile(ctx context.Context, h httpTarget, r scaleResource, objects int, gets *ScaleGets) []time.Duration {
	var latencies []time.Duration
	for ctx.Err() == nil {
		i := rand.IntN(objects)
		began := time.Now()
		err := h.do(ctx, http.MethodGet, r.collection(scaleNamespace(i))+"/"+r.name(i), nil, http.StatusOK, nil)
		took := time.Since(began)
		switch {
		case ctx.Err() != nil:
			// Cut short by the end of the lists: neither a success nor a failure.
		case err != nil:
			if gets.Failed == 0 {
				gets.FirstError = err.Error()
			}
			gets.Failed++
		default:
			latencies = append(latencies, took)
		}
	}
	gets.Requests = len(latencies)
	return latencies
}

// pagedList lists every seeded object ScalePageSize at a time.
func pagedList(ctx context.Context, s *server, r scaleResource, objects int) (ScalePaged, error) {
	p := ScalePaged{Limit: ScalePageSize}
	h, err := s.target(ViaHTTP1, 1)
	if err != nil {
		return p, err
	}
	defer h.client.CloseIdleConnections()
	var buf bytes.Buffer
	token := ""
	for {
		q := url.Values{"limit": {fmt.Sprint(ScalePageSize)}}
		if token != "" {
			q.Set("continue", token)
		}
		began := time.Now()
		if err := h.do(ctx, http.MethodGet, r.all+"?"+q.Encode(), nil, http.StatusOK, &buf); err != nil {
			return p, fmt.Errorf("paged LIST, page %d: %w", p.Pages+1, err)
		}
		took := time.Since(began)
		if p.Pages == 0 {
			p.First = took
		}
		p.Pages, p.Last, p.Took = p.Pages+1, took, p.Took+took
		var page struct {
			Metadata struct {
				Continue string `json:"continue"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(buf.Bytes(), &page); err != nil {
			return p, fmt.Errorf("paged LIST, page %d: %w", p.Pages, err)
		}
		p.Items += bytes.Count(buf.Bytes(), r.needle())
		if token = page.Metadata.Continue; token == "" {
			break
		}
	}
	p.Mean = p.Took / time.Duration(p.Pages)
	if p.Items != objects {
		return p, fmt.Errorf("the paged LIST held %d seeded objects, want %d", p.Items, objects)
	}
	return p, nil
}
