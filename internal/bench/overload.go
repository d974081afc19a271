package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/apictl/apictl/pkg/certs"
)

// Issue 8's overload: a server allowed OverloadReadLimit reads at once gets OverloadFactor times as
// many clients, all listing the seeded objects. It must turn the excess away with 429, and its
// memory must stay within OverloadAllowance of idle: a fixed allowance, so that a server which
// queued or buffered the waiting clients would exceed it.
const (
	OverloadReadLimit     = 10
	OverloadMutatingLimit = 5
	OverloadFactor        = 10
	OverloadAllowance     = 100 << 20
)

const (
	// The overload's user is no member of system:masters, whose requests the limit exempts (as in
	// kube); the insecure port's user and the admin certificate are members.
	overloadUser  = "bench-overload"
	overloadGroup = "bench"
	// rssSampleInterval is how often the overloaded server's VmRSS is read.
	rssSampleInterval = 50 * time.Millisecond
	// minOverloadWarmup is the shortest warm-up of the overload, whatever the run's: its clients'
	// TLS handshakes, a hundred at once on a busy machine, must be over before anything is recorded.
	minOverloadWarmup = time.Second
)

// overloadClientDescription says how the overload's clients behave, printed with the report.
const overloadClientDescription = "http/1.1 over TLS, a keep-alive connection per client, client certificate CN=" +
	overloadUser + " O=" + overloadGroup + " (not exempt from the limit); each client asks again at once, ignoring Retry-After"

// Overload is what a server under ten times the load its --max-requests-inflight allows answered,
// and what its resident memory did meanwhile.
type Overload struct {
	// ReadLimit and MutatingLimit are the server's --max-requests-inflight and
	// --max-mutating-requests-inflight; Clients LIST the Objects seeded objects (resourceVersion
	// unset) at once, as Client says, for Duration after Warmup.
	ReadLimit     int           `json:"maxRequestsInflight"`
	MutatingLimit int           `json:"maxMutatingRequestsInflight"`
	Clients       int           `json:"clients"`
	Objects       int           `json:"objects"`
	Client        string        `json:"client"`
	Warmup        time.Duration `json:"warmupNanoseconds"`
	Duration      time.Duration `json:"durationNanoseconds"`
	// OK counts the 200 answers in the measured window, P50 and P99 are their latencies.
	OK          int           `json:"ok"`
	OKPerSecond float64       `json:"okPerSecond"`
	P50         time.Duration `json:"okP50Nanoseconds"`
	P99         time.Duration `json:"okP99Nanoseconds"`
	// TooMany counts the 429 answers that carried Retry-After and a TooManyRequests Status.
	TooMany          int     `json:"tooManyRequests"`
	TooManyPerSecond float64 `json:"tooManyRequestsPerSecond"`
	// Failed counts every other answer (and every request without one); FirstError is the first.
	Failed     int    `json:"failed"`
	FirstError string `json:"firstError,omitempty"`
	// IdleRSS is the server's VmRSS before the overload; PeakRSS the largest of Samples readings
	// taken every 50 ms while it lasted, warm-up included; HWM the server's VmHWM right after it;
	// AfterRSS its VmRSS once it has idled again.
	IdleRSS  int64 `json:"idleRSSBytes"`
	PeakRSS  int64 `json:"peakRSSBytes"`
	Samples  int   `json:"samples"`
	HWM      int64 `json:"hwmBytes"`
	AfterRSS int64 `json:"afterRSSBytes"`
	// Allowance is how far above IdleRSS the peak may go (OverloadAllowance).
	Allowance int64 `json:"allowanceBytes"`
}

// PeakLimit is the memory the server may reach under the overload: idle plus the allowance.
func (o *Overload) PeakLimit() int64 { return o.IdleRSS + o.Allowance }

// measureOverload starts a server of its own on the harness's etcd (where compare seeded the listed
// objects) with small in-flight limits, and overloads it.
func measureOverload(ctx context.Context, cfg Config, etcdURLs []string, dir string) (_ *Overload, err error) {
	o := &Overload{
		ReadLimit: OverloadReadLimit, MutatingLimit: OverloadMutatingLimit, Clients: OverloadFactor * OverloadReadLimit,
		Objects: cfg.ListObjects, Client: overloadClientDescription, Allowance: OverloadAllowance,
		Warmup: max(cfg.Warmup, minOverloadWarmup), Duration: cfg.Duration,
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("measuring overload: %w", err)
	}
	// AlwaysAllow: the overload measures the in-flight limit, which sits before authorization, and its
	// user must be allowed to list whatever the default authorization mode.
	s, _, err := startServer(ctx, cfg.Apictl, filepath.Join(dir, "server"), etcdURLs, 10*time.Millisecond,
		"--max-requests-inflight", strconv.Itoa(o.ReadLimit), "--max-mutating-requests-inflight", strconv.Itoa(o.MutatingLimit),
		"--authorization-mode", "AlwaysAllow")
	if err != nil {
		return nil, fmt.Errorf("measuring overload: %w", err)
	}
	defer func() { err = errors.Join(err, s.stop()) }()
	client, err := s.overloadClient(ctx, o.Clients)
	if err != nil {
		return nil, fmt.Errorf("measuring overload: %w", err)
	}
	defer client.CloseIdleConnections()
	h := httpTarget{client: client, base: s.secureURL, protoMajor: 1}
	path := configMapsPath(listNamespace)
	// One list first shows that the certificate is accepted, its user may list, and the seeded
	// objects are there: every 200 of the overload is then the same answer.
	if _, err := checkListed(ctx, h, path, cfg.ListObjects); err != nil {
		return nil, fmt.Errorf("measuring overload: %w", err)
	}
	if err := sleep(ctx, cfg.Settle); err != nil {
		return nil, err
	}
	if o.IdleRSS, _, err = s.proc.memory(); err != nil {
		return nil, err
	}

	cfg.Logger.Info("overloading", "clients", o.Clients, "max-requests-inflight", o.ReadLimit)
	var t tally
	o.PeakRSS, o.Samples, err = s.sampleRSSWhile(ctx, func() (err error) {
		t, err = measure(ctx, o.Clients, window{Warmup: o.Warmup, Duration: o.Duration}, func(context.Context, int) (op, error) {
			return overloadOp(h, path), nil
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("measuring overload: %w", err)
	}
	if _, o.HWM, err = s.proc.memory(); err != nil {
		return nil, err
	}
	o.OK, o.OKPerSecond, o.P50, o.P99 = t.Completed, t.PerSecond(), t.Percentile(50), t.Percentile(99)
	o.TooMany, o.TooManyPerSecond = t.Shed, float64(t.Shed)/t.Elapsed.Seconds()
	o.Failed = t.Failed
	if t.FirstError != nil {
		o.FirstError = t.FirstError.Error()
	}
	client.CloseIdleConnections()
	if err := sleep(ctx, cfg.Settle); err != nil {
		return nil, err
	}
	if o.AfterRSS, _, err = s.proc.memory(); err != nil {
		return nil, err
	}
	return o, nil
}

// overloadClient issues a client certificate for the overload's user, signed by the server's CA,
// and returns a client that presents it from one connection per client.
func (s *server) overloadClient(ctx context.Context, clients int) (*http.Client, error) {
	spec := certs.NewClientSpec(s.pkiDir(), overloadUser)
	spec.Groups = []string{overloadGroup}
	spec.Server = s.secureURL
	if _, err := certs.IssueClient(ctx, spec); err != nil {
		return nil, fmt.Errorf("issuing the overload's client certificate: %w", err)
	}
	return s.newCrowdClient(overloadUser, clients)
}

// overloadOp lists path: a 200 succeeds, a 429 as kube sends it is errShed, anything else fails.
func overloadOp(h httpTarget, path string) op {
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.base+path, nil)
		if err != nil {
			return err
		}
		req.Header.Set("Accept", "application/json")
		resp, err := h.client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		err = judgeOverloadAnswer(resp)
		if err == nil || errors.Is(err, errShed) {
			return err
		}
		return fmt.Errorf("GET %s: %w", path, err)
	}
}

// maxStatusBytes bounds how much of a 429's body is read: a Status is a few hundred bytes.
const maxStatusBytes = 4 << 10

// judgeOverloadAnswer reads resp to its end and returns nil for a 200, errShed for a 429 that
// carries Retry-After and a TooManyRequests Status (what clients such as client-go retry on), and
// an error for any other answer.
func judgeOverloadAnswer(resp *http.Response) error {
	switch resp.StatusCode {
	case http.StatusOK:
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			return fmt.Errorf("reading the response: %w", err)
		}
		return nil
	case http.StatusTooManyRequests:
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxStatusBytes))
		if err != nil {
			return fmt.Errorf("reading the 429 response: %w", err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		if err := checkTooManyRequests(resp.Header.Get("Retry-After"), body); err != nil {
			return fmt.Errorf("429 Too Many Requests, but %w", err)
		}
		return errShed
	default:
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		_, _ = io.Copy(io.Discard, resp.Body)
		return fmt.Errorf("%d %s, want 200 or 429: %s", resp.StatusCode, http.StatusText(resp.StatusCode), bytes.TrimSpace(msg))
	}
}

// statusAnswer is the part of a kube Status the overload checks.
type statusAnswer struct {
	Kind   string `json:"kind"`
	Reason string `json:"reason"`
	Code   int    `json:"code"`
}

// checkTooManyRequests checks a 429's Retry-After header (a whole number of seconds, as kube sends)
// and body (a Status with reason TooManyRequests and code 429).
func checkTooManyRequests(retryAfter string, body []byte) error {
	var problems []string
	if retryAfter == "" {
		problems = append(problems, "no Retry-After header")
	} else if n, err := strconv.Atoi(retryAfter); err != nil || n < 0 {
		problems = append(problems, fmt.Sprintf("the Retry-After header %q is not a number of seconds", retryAfter))
	}
	var s statusAnswer
	if err := json.Unmarshal(body, &s); err != nil {
		problems = append(problems, fmt.Sprintf("the body is no Status (%v): %.200s", err, body))
	} else if s.Kind != "Status" || s.Reason != "TooManyRequests" || s.Code != http.StatusTooManyRequests {
		problems = append(problems, fmt.Sprintf("the body is no TooManyRequests Status (kind %q, reason %q, code %d)", s.Kind, s.Reason, s.Code))
	}
	if len(problems) == 0 {
		return nil
	}
	return errors.New(strings.Join(problems, "; "))
}

// sampleRSSWhile runs do while it reads the server's VmRSS every rssSampleInterval, and returns the
// largest reading and how many there were.
func (s *server) sampleRSSWhile(ctx context.Context, do func() error) (peak int64, n int, err error) {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	type sampled struct {
		peak int64
		n    int
		err  error
	}
	samples := make(chan sampled, 1)
	go func() {
		peak, n, err := sampleMax(ctx, rssSampleInterval, func() (int64, error) {
			rss, _, err := s.proc.memory()
			return rss, err
		})
		samples <- sampled{peak, n, err}
	}()
	err = do()
	stop()
	got := <-samples
	return got.peak, got.n, errors.Join(err, got.err)
}

// sampleMax calls read at once and then every interval until ctx ends, and returns the largest value
// read and how many reads there were. A failed read ends the sampling with its error.
func sampleMax(ctx context.Context, interval time.Duration, read func() (int64, error)) (peak int64, n int, err error) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		v, err := read()
		if err != nil {
			return peak, n, err
		}
		peak, n = max(peak, v), n+1
		if ctx.Err() != nil {
			// Ended while reading: select would pick at random between it and a tick due meanwhile.
			return peak, n, nil
		}
		select {
		case <-ctx.Done():
			return peak, n, nil
		case <-t.C:
		}
	}
}
