package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// Issue 38's abuse of a loaded server, run when Config.ScaleStress is set: clients that go away in the
// middle of a YAML LIST, and a crowd of curl LISTs.
const (
	// ScaleDisconnectClients YAML LISTs are read for ScaleDisconnectAfter, then their clients go.
	ScaleDisconnectClients = 8
	ScaleDisconnectAfter   = time.Second
	// ScaleStopTarget is how soon after the clients went the server must have stopped working for them.
	ScaleStopTarget = 10 * time.Second
	// scaleStopWait is how long the harness watches for it.
	scaleStopWait = 60 * time.Second
	// scaleQuietCores is how much busier than idle the server may be and count as having stopped: its
	// own background work (compaction, controllers) and the harness's reads of it.
	scaleQuietCores = 0.25
	// ScaleFloodClients curl LISTs of everything run at once.
	ScaleFloodClients = 32
	// curlUserAgent makes the server answer as it answers curl: indented JSON.
	curlUserAgent = "curl/8.5.0"
)

// ScaleDisconnects is ScaleDisconnectClients YAML LISTs whose clients go after ScaleDisconnectAfter.
type ScaleDisconnects struct {
	Clients int `json:"clients"`
	// IdleCores is the server's CPU use before, in cores.
	IdleCores float64 `json:"idleCores"`
	// Stopped is the time from the clients' going to the end of the first second in which the server
	// used at most scaleQuietCores more than idle; nil when not within scaleStopWait.
	Stopped *time.Duration `json:"stoppedNanoseconds,omitempty"`
	Peak    int64          `json:"peakRssBytes"`
	// After is the memory when it came back within ScaleReturnTarget of idle, or AfterDelay later.
	After      ScaleMemory    `json:"after"`
	AfterDelay time.Duration  `json:"afterDelayNanoseconds"`
	Returned   *time.Duration `json:"returnedNanoseconds,omitempty"`
}

// ScaleFlood is ScaleFloodClients unpaged LISTs at once as curl asks: each must get the whole list or
// a 429, never a reset connection or another status.
type ScaleFlood struct {
	Clients  int `json:"clients"`
	Complete int `json:"complete"`
	TooMany  int `json:"tooManyRequests"`
	// Failed are the others: another status, a connection reset or closed early, a short list.
	Failed     int           `json:"failed"`
	FirstError string        `json:"firstError,omitempty"`
	Took       time.Duration `json:"tookNanoseconds"`
	Peak       int64         `json:"peakRssBytes"`
	// Budget is the server's memory budget as Go's soft memory limit reports it (0 when not read).
	Budget int64 `json:"budgetBytes"`
	// Up says the server answered /readyz after the flood.
	Up bool `json:"up"`
}

// measureStress runs the disconnects, then the flood.
func measureStress(ctx context.Context, cfg Config, s *server, r scaleResource, sc *Scale) error {
	var err error
	if sc.Disconnects, err = disconnects(ctx, s, r, sc); err != nil {
		return fmt.Errorf("scale: LISTs whose clients go: %w", err)
	}
	d := sc.Disconnects
	cfg.Logger.Info("scale: YAML LISTs whose clients went after "+ScaleDisconnectAfter.String(), "clients", d.Clients, "stopped", d.Stopped, "returned", d.Returned)
	if sc.Flood, err = flood(ctx, s, r, sc); err != nil {
		return fmt.Errorf("scale: %d curl LISTs: %w", ScaleFloodClients, err)
	}
	f := sc.Flood
	cfg.Logger.Info("scale: curl LISTs at once", "clients", f.Clients, "complete", f.Complete, "429", f.TooMany, "failed", f.Failed,
		"peak", formatBytes(f.Peak), "budget", formatBytes(f.Budget), "took", f.Took.Round(time.Second))
	return nil
}

// disconnects starts the YAML LISTs, drops them, and watches the server's CPU and memory.
func disconnects(ctx context.Context, s *server, r scaleResource, sc *Scale) (*ScaleDisconnects, error) {
	d := &ScaleDisconnects{Clients: ScaleDisconnectClients}
	idle, err := cpuRate(ctx, s.proc, 3*time.Second)
	if err != nil {
		return nil, err
	}
	d.IdleCores = idle
	h, err := s.target(ViaHTTP1, ScaleDisconnectClients)
	if err != nil {
		return nil, err
	}
	defer h.client.CloseIdleConnections()
	yaml := representationOf(ReprYAML)
	var gone time.Time
	d.Peak, _, err = s.sampleRSSWhile(ctx, func() error {
		var wg sync.WaitGroup
		errs := make([]error, ScaleDisconnectClients)
		for i := range ScaleDisconnectClients {
			wg.Go(func() { errs[i] = readFor(ctx, h, r.all, yaml.accept, ScaleDisconnectAfter) })
		}
		wg.Wait()
		gone = time.Now()
		return errors.Join(errs...)
	})
	if err != nil {
		return nil, err
	}
	for since := time.Duration(0); since < scaleStopWait; since = time.Since(gone) {
		rate, err := cpuRate(ctx, s.proc, time.Second)
		if err != nil {
			return nil, err
		}
		if rate <= idle+scaleQuietCores {
			stopped := time.Since(gone)
			d.Stopped = &stopped
			break
		}
	}
	d.After, d.AfterDelay, d.Returned, err = waitReturned(ctx, s, sc)
	return d, err
}

// readFor asks for path and reads the answer for d, then goes away; an answer that ends sooner, or is
// not a 200, is an error.
func readFor(ctx context.Context, h httpTarget, path, accept string, d time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.base+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", accept)
	resp, err := h.client.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: no answer within %s: %w", path, d, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return &statusError{Method: http.MethodGet, Path: path, Code: resp.StatusCode, Want: http.StatusOK}
	}
	n, err := io.Copy(io.Discard, resp.Body)
	if err == nil {
		return fmt.Errorf("GET %s: the whole list (%s) came within %s: nothing to go away from", path, formatBytes(n), d)
	}
	return nil
}

// cpuRate is the cores the process uses over the next window.
func cpuRate(ctx context.Context, p *process, window time.Duration) (float64, error) {
	before, err := p.cpuTime()
	if err != nil {
		return 0, err
	}
	began := time.Now()
	if err := sleep(ctx, window); err != nil {
		return 0, err
	}
	after, err := p.cpuTime()
	if err != nil {
		return 0, err
	}
	return float64(after-before) / float64(time.Since(began)), nil
}

// flood runs the curl LISTs and sorts their answers.
func flood(ctx context.Context, s *server, r scaleResource, sc *Scale) (*ScaleFlood, error) {
	f := &ScaleFlood{Clients: ScaleFloodClients}
	if limit, err := s.metric(ctx, "go_gc_gomemlimit_bytes"); err == nil && limit < 1<<62 {
		f.Budget = int64(limit)
	}
	h, err := s.target(ViaHTTP1, ScaleFloodClients)
	if err != nil {
		return nil, err
	}
	defer h.client.CloseIdleConnections()
	pretty := representationOf(ReprPretty)
	codes := make([]int, ScaleFloodClients)
	errs := make([]error, ScaleFloodClients)
	began := time.Now()
	f.Peak, _, err = s.sampleRSSWhile(ctx, func() error {
		listCtx, cancel := context.WithTimeout(ctx, scaleListTimeout)
		defer cancel()
		var wg sync.WaitGroup
		for i := range ScaleFloodClients {
			wg.Go(func() { codes[i], errs[i] = curlList(listCtx, h, r.all, pretty.needle(r.prefix), sc.Objects) })
		}
		wg.Wait()
		return nil
	})
	f.Took = time.Since(began)
	if err != nil {
		return nil, err
	}
	for i, code := range codes {
		switch {
		case errs[i] != nil:
			f.Failed++
			if f.FirstError == "" {
				f.FirstError = errs[i].Error()
			}
		case code == http.StatusOK:
			f.Complete++
		default:
			f.TooMany++
		}
	}
	f.Up = s.ready(ctx)
	return f, nil
}

// curlList GETs path as curl does and reads the answer to its end: a 200 must hold every object, a
// 429 must say when to come back; anything else is an error.
func curlList(ctx context.Context, h httpTarget, path string, needle []byte, objects int) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.base+path, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("User-Agent", curlUserAgent)
	req.Header.Set("Accept", "*/*")
	resp, err := h.client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("GET %s: %w", path, err)
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusTooManyRequests:
		if resp.Header.Get("Retry-After") == "" {
			return resp.StatusCode, fmt.Errorf("GET %s: 429 without Retry-After", path)
		}
		_, err := io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, err
	default:
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return resp.StatusCode, &statusError{Method: http.MethodGet, Path: path, Code: resp.StatusCode, Want: http.StatusOK, Body: string(bytes.TrimSpace(msg))}
	}
	counter := &needleCounter{needle: needle}
	n, err := io.Copy(counter, resp.Body)
	if err != nil {
		return resp.StatusCode, fmt.Errorf("GET %s: reading the list after %s: %w", path, formatBytes(n), err)
	}
	if counter.n != objects {
		return resp.StatusCode, fmt.Errorf("GET %s: the list held %d seeded objects, want %d", path, counter.n, objects)
	}
	return resp.StatusCode, nil
}

// stressRows are the abuse's lines of the scale table, and the slow applies.
func (sc *Scale) stressRows() [][]string {
	rows := [][]string{{fmt.Sprintf("etcd applies over %s in the server's log (slowest logged: %s)", SlowApplyLimit, formatLatency(sc.SlowestApply)),
		fmt.Sprint(sc.SlowApplies), "0", atMost(int64(sc.SlowApplies), 0)}}
	if d := sc.Disconnects; d != nil {
		stopped, verdict := fmt.Sprintf("not within %s", scaleStopWait), "over target"
		if d.Stopped != nil {
			stopped, verdict = formatLatency(*d.Stopped), atMost(int64(*d.Stopped), int64(ScaleStopTarget))
		}
		returned, returnedVerdict := fmt.Sprintf("not within %s", d.AfterDelay.Round(time.Second)), "over target"
		if d.Returned != nil {
			returned, returnedVerdict = d.Returned.Round(time.Second).String(), "ok"
		}
		rows = append(rows,
			[]string{fmt.Sprintf("%d YAML LISTs, clients gone after %s: server back to idle CPU (%.2f cores) after", d.Clients, ScaleDisconnectAfter, d.IdleCores),
				stopped, "≤ " + formatLatency(ScaleStopTarget), verdict},
			[]string{fmt.Sprintf("%d YAML LISTs, clients gone: back within %.0f%% of idle RSS after (peak %s)", d.Clients, 100*ScaleReturnTarget, sc.overIdle(d.Peak)),
				returned, "≤ " + ScaleReturnWait.String(), returnedVerdict})
	}
	if f := sc.Flood; f != nil {
		verdict := "ok"
		if f.Failed > 0 || !f.Up {
			verdict = "FAILED"
		}
		budget := "budget not read"
		if f.Budget > 0 {
			budget = "budget " + formatBytes(f.Budget)
		}
		rows = append(rows,
			[]string{fmt.Sprintf("%d curl LISTs at once (%s): whole list, 429, other (server up after: %t)", f.Clients, f.Took.Round(time.Second), f.Up),
				fmt.Sprintf("%d, %d, %d", f.Complete, f.TooMany, f.Failed), "200 or 429", verdict},
			[]string{fmt.Sprintf("%d curl LISTs at once: peak RSS (%s)", f.Clients, budget), sc.overIdle(f.Peak), "under budget", underBudget(f)})
	}
	return rows
}

func underBudget(f *ScaleFlood) string {
	if f.Budget == 0 {
		return "-"
	}
	return atMost(f.Peak, f.Budget)
}

// stressProblems fail the run: a curl LIST answered otherwise than whole or 429, a server down.
func (sc *Scale) stressProblems() []error {
	f := sc.Flood
	if f == nil {
		return nil
	}
	var errs []error
	if f.Failed > 0 {
		errs = append(errs, fmt.Errorf("scale: %d of %d curl LISTs were neither whole nor a 429, the first: %s", f.Failed, f.Clients, f.FirstError))
	}
	if !f.Up {
		errs = append(errs, fmt.Errorf("scale: the server did not answer /readyz after %d curl LISTs", f.Clients))
	}
	return errs
}
