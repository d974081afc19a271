package bench

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Operation names a measured operation: the server's (GET, LIST, ...) or etcd's (get, range, ...).
type Operation string

// The server's operations, each an HTTP request on one small ConfigMap or on the 1,000 seeded ones.
const (
	OpGet    Operation = "GET"       // GET of one object by name
	OpList   Operation = "LIST"      // LIST of 1,000 objects, resourceVersion unset (a quorum read)
	OpListRV Operation = "LIST rv=0" // the same LIST with resourceVersion=0 (may be served from memory)
	OpCreate Operation = "CREATE"    // POST of a new object
	OpUpdate Operation = "UPDATE"    // PUT with the current resourceVersion, one object per worker

	// The LISTs again as client-go sends them, asking for gzip, and read through its decompression:
	// measured only by the before comparison (Config.Before), where the server's cost of compressing
	// is what is compared (issue 38), not against etcd.
	OpListGzip   Operation = "LIST gzip"
	OpListRVGzip Operation = "LIST rv=0 gzip"
)

// etcd's operations: the same work done directly with clientv3 on the server's etcd.
const (
	OpEtcdGet    Operation = "get"    // Get of the key of GET's object
	OpEtcdRange  Operation = "range"  // Get of the prefix of the 1,000 listed objects
	OpEtcdCreate Operation = "create" // txn: put if the key does not exist
	OpEtcdCAS    Operation = "CAS"    // txn: put if the mod revision is unchanged
)

// Via names the path a request takes to the data.
type Via string

// The paths: the server's two ports, or etcd directly.
const (
	ViaHTTP1 Via = "http/1.1" // the insecure port, plain HTTP/1.1, keep-alive
	ViaHTTP2 Via = "h2+tls"   // the secure port, HTTP/2 over TLS, admin client certificate
	ViaEtcd  Via = "etcd"     // clientv3 on the same etcd the server uses
	// ViaFeatures is the secure port, HTTP/2 over TLS, of a replica with RBAC, audit, an admission
	// policy and encryption at rest on (features.go), for a client outside system:masters.
	ViaFeatures Via = "h2+tls+features"
)

// Target is one of issue 8's goals: the server's rate for Operation over Via must be at least Ratio
// times the rate of the etcd operation Against, at every concurrency.
type Target struct {
	Operation Operation `json:"operation"`
	Via       Via       `json:"via"`
	Against   Operation `json:"against"`
	Ratio     float64   `json:"target"`
}

// Floor is the ratio below which the guard fails: half the target, low enough that machine noise
// cannot trip it, high enough to catch a gross regression.
func (t Target) Floor() float64 { return t.Ratio / 2 }

// FeaturesAllowance is the share of issue 8's HTTP/2 targets the features-on server is held to.
// Issue 17 held it to the targets themselves, when what it turns on cost less than the machine's
// noise. Since issue 35 it also queues its client's requests through API Priority and Fairness (the
// client is not exempt, as system:masters is) and counts quota with an in-process controller that
// watches every ConfigMap; with audit, RBAC, the admission policy and encryption, its rates were 10
// to 25% under the bare server's in the same runs (GET at 8: 0.28× to 0.30× etcd against 0.32×;
// CREATE at 32: 0.24× to 0.25× against 0.30× to 0.31×), at and under the floors of the bare targets.
// Its own targets say what it may cost: a fifth of the bare server's.
const FeaturesAllowance = 0.8

// Targets are issue 8's ratios. Only GET names its transports; the other goals apply to both ports,
// and to the features-on server (issue 17) with HTTP/2's GET target, times FeaturesAllowance.
func Targets() []Target {
	var ts []Target
	for _, via := range []Via{ViaHTTP1, ViaHTTP2, ViaFeatures} {
		get, share := 0.8, 1.0
		if via != ViaHTTP1 {
			get = 0.6
		}
		if via == ViaFeatures {
			share = FeaturesAllowance
		}
		// Hundredths, as targets are written and printed.
		of := func(r float64) float64 { return math.Round(r*share*100) / 100 }
		ts = append(ts,
			Target{Operation: OpGet, Via: via, Against: OpEtcdGet, Ratio: of(get)},
			Target{Operation: OpList, Via: via, Against: OpEtcdRange, Ratio: of(0.4)},
			Target{Operation: OpListRV, Via: via, Against: OpEtcdRange, Ratio: of(2)},
			Target{Operation: OpCreate, Via: via, Against: OpEtcdCreate, Ratio: of(0.5)},
			Target{Operation: OpUpdate, Via: via, Against: OpEtcdCAS, Ratio: of(0.4)},
		)
	}
	return ts
}

// Report is the outcome of one harness run.
type Report struct {
	Environment Environment `json:"environment"`
	// Results holds one entry per operation, path and concurrency, in the order they ran.
	Results []Result `json:"results"`
	// Ratios compares each server result with its etcd counterpart at the same concurrency.
	Ratios  []Ratio `json:"ratios"`
	Startup Startup `json:"startup"`
	Memory  Memory  `json:"memory"`
	// Overload and Kubectl are nil when the run measured only some operations (Config.Only).
	Overload *Overload `json:"overload,omitempty"`
	Kubectl  *Kubectl  `json:"kubectl,omitempty"`
	// Authz is set when the run compared RBAC with AlwaysAllow (Config.Authz).
	Authz *Authz `json:"authz,omitempty"`
	// Churn is set when the run churned namespaces (Config.NamespaceCycles).
	Churn *Churn `json:"namespaceChurn,omitempty"`
	// Scale is set when the run measured at scale (Config.ScaleObjects).
	Scale *Scale `json:"scale,omitempty"`
	// Peer is set, and nothing else measured, when the run compared apictl with the upstream
	// apiextensions-apiserver (Config.Upstream).
	Peer *Peer `json:"peer,omitempty"`
}

// Result is one measurement.
type Result struct {
	Operation   Operation `json:"operation"`
	Via         Via       `json:"via"`
	Concurrency int       `json:"concurrency"`
	// Requests succeeded within the measured window; Failed did not (FirstError says why).
	Requests   int    `json:"requests"`
	Failed     int    `json:"failed"`
	FirstError string `json:"firstError,omitempty"`
	// PerSecond is successful requests (or etcd operations) per second.
	PerSecond float64       `json:"perSecond"`
	P50       time.Duration `json:"p50Nanoseconds"`
	P99       time.Duration `json:"p99Nanoseconds"`
	// AllocsPerRequest is the server process's heap allocations per request (its
	// go_memstats_mallocs_total over the run, warm-up included, divided by the requests sent); unset
	// for etcd, whose allocations are not the server's.
	AllocsPerRequest *float64 `json:"allocsPerRequest,omitempty"`
	// Duration is the measured window.
	Duration time.Duration `json:"durationNanoseconds"`
}

// Ratio is a server result divided by its etcd counterpart.
type Ratio struct {
	Target
	Concurrency int     `json:"concurrency"`
	Server      float64 `json:"serverPerSecond"`
	Etcd        float64 `json:"etcdPerSecond"`
	// Value is Server/Etcd; 0 when etcd's rate is 0 (its measurement failed).
	Value float64 `json:"ratio"`
	// Attempts, when more than 1, is how many times a guarded run measured this ratio, which is
	// the best of them (see GuardAttempts).
	Attempts int `json:"attempts,omitempty"`
}

// Verdict says where a ratio stands: "ok" at or above its target, "below target" under it, "BELOW
// FLOOR" under half of it (where the guard fails), "no data" when a side has no rate.
func (r Ratio) Verdict() string {
	switch {
	case r.Etcd <= 0 || r.Server <= 0:
		return "no data"
	case r.Value >= r.Ratio:
		return "ok"
	case r.Value >= r.Floor():
		return "below target"
	default:
		return "BELOW FLOOR"
	}
}

// Startup is the time from starting `apictl serve` (embedded etcd, empty data dir) until /readyz
// answers 200, over several starts.
type Startup struct {
	Runs   []time.Duration `json:"runsNanoseconds"`
	Median time.Duration   `json:"medianNanoseconds"`
	// Target is issue 8's goal (0.2 s).
	Target time.Duration `json:"targetNanoseconds"`
}

// Memory is the resident memory (VmRSS) of `apictl serve` with its embedded etcd.
type Memory struct {
	// IdleRSS is measured once the server is ready and has settled. IdleAnon and IdleFile divide
	// it (RssAnon and RssFile; zero where the kernel does not report them): the process's own
	// memory, and the file pages it maps, almost all of them apictl's binary.
	IdleRSS  int64 `json:"idleRSSBytes"`
	IdleAnon int64 `json:"idleRSSAnonBytes,omitempty"`
	IdleFile int64 `json:"idleRSSFileBytes,omitempty"`
	// Objects small ConfigMaps are then created; LoadedRSS is measured after that, and PeakRSS is the
	// process's high-water mark (VmHWM) at that point.
	Objects   int   `json:"objects"`
	LoadedRSS int64 `json:"loadedRSSBytes"`
	PeakRSS   int64 `json:"peakRSSBytes"`
	// IdleTarget and LoadedTarget are issue 8's goals (45 MB and 120 MB).
	IdleTarget   int64 `json:"idleTargetBytes"`
	LoadedTarget int64 `json:"loadedTargetBytes"`
}

// Issue 8's start-up and memory goals.
const (
	StartupTarget   = 200 * time.Millisecond
	IdleRSSTarget   = 45 << 20
	LoadedRSSTarget = 120 << 20
)

// computeRatios pairs every server result with the etcd result its target names.
func computeRatios(results []Result, targets []Target) []Ratio {
	type key struct {
		op  Operation
		via Via
		c   int
	}
	byKey := make(map[key]Result, len(results))
	for _, r := range results {
		byKey[key{r.Operation, r.Via, r.Concurrency}] = r
	}
	var ratios []Ratio
	for _, r := range results {
		if r.Via == ViaEtcd {
			continue
		}
		for _, t := range targets {
			if t.Operation != r.Operation || t.Via != r.Via {
				continue
			}
			e, ok := byKey[key{t.Against, ViaEtcd, r.Concurrency}]
			if !ok {
				continue
			}
			ratio := Ratio{Target: t, Concurrency: r.Concurrency, Server: r.PerSecond, Etcd: e.PerSecond}
			if e.PerSecond > 0 {
				ratio.Value = r.PerSecond / e.PerSecond
			}
			ratios = append(ratios, ratio)
		}
	}
	return ratios
}

// Check reports what makes the run fail: any failed request (numbers from failing requests mean
// nothing) always, among them answers to the overload other than 200 and a proper 429, and kubectl
// runs that failed or printed a wrong table; and, with guard, every ratio below half of its target
// or without data.
func (r *Report) Check(guard bool) error {
	var errs []error
	for _, res := range r.Results {
		if res.Failed > 0 {
			errs = append(errs, fmt.Errorf("%s via %s at concurrency %d: %d of %d requests failed, the first with: %s",
				res.Operation, res.Via, res.Concurrency, res.Failed, res.Failed+res.Requests, res.FirstError))
		}
	}
	if o := r.Overload; o != nil && o.Failed > 0 {
		errs = append(errs, fmt.Errorf("overload of %d clients: %d of %d requests failed (neither 200 nor 429 with Retry-After and a TooManyRequests Status), the first with: %s",
			o.Clients, o.Failed, o.Failed+o.OK+o.TooMany, o.FirstError))
	}
	if k := r.Kubectl; k != nil && k.Failed > 0 {
		errs = append(errs, fmt.Errorf("kubectl: %d of %d runs failed, the first with: %s",
			k.Failed, kubectlCommands*(k.Warmups+k.Runs), k.FirstError))
	}
	if a := r.Authz; a != nil {
		for _, res := range a.Results {
			if res.Failed > 0 {
				errs = append(errs, fmt.Errorf("authorization comparison, %s: %d requests failed, the first with: %s", res.Operation, res.Failed, res.FirstError))
			}
		}
	}
	if c := r.Churn; c != nil && c.Growth > ChurnGrowthTarget {
		b := c.Samples[c.Baseline]
		errs = append(errs, fmt.Errorf("namespace churn: anonymous RSS grew by %.1f%% from %d to %d cycles (%s to %s), more than %.0f%%",
			100*c.Growth, b.Cycles, c.Cycles, formatBytes(b.Anon), formatBytes(c.Samples[len(c.Samples)-1].Anon), 100*ChurnGrowthTarget))
	}
	if r.Scale != nil {
		errs = append(errs, r.Scale.problems(guard)...)
	}
	if r.Peer != nil {
		errs = append(errs, r.Peer.problems()...)
	}
	if guard {
		for _, ra := range r.Ratios {
			if ra.failsGuard() {
				errs = append(errs, fmt.Errorf("%s via %s at concurrency %d: %.2f× etcd %s (%.0f/s vs %.0f/s), below the floor %.2f× (half of the target %.2f×)",
					ra.Operation, ra.Via, ra.Concurrency, ra.Value, ra.Against, ra.Server, ra.Etcd, ra.Floor(), ra.Ratio))
			}
		}
	}
	return errors.Join(errs...)
}
