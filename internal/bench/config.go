package bench

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"time"
)

// Config says what to run and for how long. Zero values take the defaults named on each field.
type Config struct {
	// Apictl is the apictl binary under test. Required.
	Apictl string
	// Etcd is a program that runs one etcd member: invoked as `Etcd -dir D -url-file F`, it writes
	// the member's client URL to F once etcd serves requests and stops on SIGTERM. The repository's
	// is bench/internal/benchetcd. Required.
	Etcd string

	// Duration is each measurement's recorded part (default 5s); Warmup runs before it unrecorded
	// (default Duration/5, at most 1s).
	Duration time.Duration
	Warmup   time.Duration
	// Concurrency lists the numbers of concurrent clients to measure with (default 8 and 32).
	Concurrency []int
	// ListObjects is how many objects LIST returns and etcd's range reads (default 1,000).
	ListObjects int
	// MemoryObjects is how many objects the loaded memory measurement stores (default 12,000).
	MemoryObjects int
	// StartupRuns is how many fresh starts the start-up time is the median of (default 3).
	StartupRuns int
	// Settle is how long the server idles before its memory is read (default 1s).
	Settle time.Duration
	// Kubectl is the kubectl binary timed printing the listed objects; empty looks for kubectl on
	// PATH, and without one that measurement is skipped. KubectlRuns is how many timed runs its
	// medians are of, after one warm-up (default 5).
	Kubectl     string
	KubectlRuns int
	// Short marks a short run in the report; it changes nothing else.
	Short bool
	// Only, when not empty, names the server operations to measure (each with its etcd counterpart)
	// and skips the start-up, memory, overload and kubectl measurements: for working on one
	// operation.
	Only []Operation
	// Authz also compares a non-superuser's throughput under --authorization-mode RBAC with
	// AlwaysAllow (issue 13's authorization overhead); off by default, as it starts two more servers.
	Authz bool
	// CRDs, when above 0, installs that many CustomResourceDefinitions through the API, and waits for
	// them to be served, before the server is measured: issue 12's check that the built-in resources
	// keep their speed with many CRDs installed.
	CRDs int
	// NamespaceCycles, when above 0, also runs the namespace churn (Churn): that many namespaces
	// created and deleted on a server of their own, its memory read along the way.
	NamespaceCycles int
	// ScaleObjects, when above 0, also runs the scale measurement (Scale) with that many objects
	// (at least MinScaleObjects) of ScaleKind (one of ScaleKinds, default ScaleCustom) on a server
	// of its own; ScaleGuard makes Check judge its guards.
	ScaleObjects int
	ScaleKind    string
	// ScaleRepresentations are the representations of the scale measurement's LISTs (some of
	// ScaleRepresentations, or "all"): compact JSON always, first, and the others after it.
	ScaleRepresentations []string
	// ScaleStress also runs issue 38's abuse of the loaded server (ScaleDisconnects, ScaleFlood).
	ScaleStress bool
	// Features also measures the operations on a replica with RBAC, audit, an admission policy and
	// encryption at rest on (ViaFeatures, issue 17), against the same targets.
	Features   bool
	ScaleGuard bool
	// ScaleData, when set, is a directory the scale measurement keeps its seeded server's data in:
	// seeded on the first run, then restarted from as it is, so that a fix can be measured again
	// without seeding a million objects each time.
	ScaleData string

	// Upstream, when set, is an upstream apiextensions-apiserver binary, and Run does only the peer
	// comparison (Peer) of apictl with it, using Duration, Warmup, Concurrency, ListObjects, Settle
	// and Only, and none of the other measurements.
	Upstream string
	// Before, when set, is another apictl binary (an earlier commit's), and Run does only the before
	// comparison (Peer, the other side named "before") of the two, with BeforeOperations, using the
	// same settings as the peer comparison.
	Before string

	// WorkDir is where the run's temporary directory is made (default os.TempDir()). Everything the
	// run writes goes there and is removed at the end.
	WorkDir string
	// Logger receives progress messages. Nil discards them.
	Logger *slog.Logger
}

// Defaults of Config.
const (
	DefaultDuration      = 5 * time.Second
	DefaultListObjects   = 1000
	DefaultMemoryObjects = 12000
	DefaultStartupRuns   = 3
	DefaultSettle        = time.Second
	DefaultKubectlRuns   = 5
	// ShortDuration is the measurement length of a short run (CI): long enough for hundreds of
	// requests per measurement, short enough for the whole run to take well under a minute.
	ShortDuration = 300 * time.Millisecond
)

// DefaultConcurrency is issue 8's pair of client counts.
func DefaultConcurrency() []int { return []int{8, 32} }

// complete fills in defaults and checks what cannot be defaulted.
func (c Config) complete() (Config, error) {
	var errs []error
	if c.Apictl == "" {
		errs = append(errs, errors.New("no apictl binary given"))
	}
	if c.Etcd == "" {
		errs = append(errs, errors.New("no etcd program given"))
	}
	if c.Duration <= 0 {
		c.Duration = DefaultDuration
	}
	if c.Warmup <= 0 {
		c.Warmup = min(c.Duration/5, time.Second)
	}
	if len(c.Concurrency) == 0 {
		c.Concurrency = DefaultConcurrency()
	}
	for _, n := range c.Concurrency {
		if n < 1 {
			errs = append(errs, fmt.Errorf("concurrency %d: want at least 1", n))
		}
	}
	ops := ServerOperations()
	if c.Before != "" {
		ops = BeforeOperations()
	}
	for _, o := range c.Only {
		if !slices.Contains(ops, o) {
			errs = append(errs, fmt.Errorf("operation %q: want one of %q", o, ops))
		}
	}
	if c.Before != "" && c.Upstream != "" {
		errs = append(errs, errors.New("both an upstream and a before binary given: the peer and the before comparisons run alone"))
	}
	if c.ScaleObjects > 0 && c.ScaleObjects < MinScaleObjects {
		errs = append(errs, fmt.Errorf("scale objects %d: want 0 or at least %d", c.ScaleObjects, MinScaleObjects))
	}
	if _, err := validRepresentations(c.ScaleRepresentations); err != nil {
		errs = append(errs, err)
	}
	if c.ScaleKind == "" {
		c.ScaleKind = ScaleCustom
	} else if !slices.Contains(ScaleKinds(), c.ScaleKind) {
		errs = append(errs, fmt.Errorf("scale kind %q: want one of %q", c.ScaleKind, ScaleKinds()))
	}
	if c.ListObjects <= 0 {
		c.ListObjects = DefaultListObjects
	}
	if c.MemoryObjects <= 0 {
		c.MemoryObjects = DefaultMemoryObjects
	}
	if c.StartupRuns <= 0 {
		c.StartupRuns = DefaultStartupRuns
	}
	if c.Settle <= 0 {
		c.Settle = DefaultSettle
	}
	if c.KubectlRuns <= 0 {
		c.KubectlRuns = DefaultKubectlRuns
	}
	if c.WorkDir == "" {
		c.WorkDir = os.TempDir()
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if err := errors.Join(errs...); err != nil {
		return c, fmt.Errorf("benchmark configuration: %w", err)
	}
	return c, nil
}

// maxConcurrency is the largest number of workers any measurement uses.
func (c Config) maxConcurrency() int {
	m := 0
	for _, n := range c.Concurrency {
		m = max(m, n)
	}
	return m
}

// ServerOperations lists the operations measured through the server, in the order they run.
func ServerOperations() []Operation {
	var ops []Operation
	for _, step := range plan {
		ops = append(ops, step.server...)
	}
	return ops
}

// BeforeOperations are the operations the before comparison measures: the server's, and its LISTs
// again asking for gzip.
func BeforeOperations() []Operation {
	return append(ServerOperations(), OpListGzip, OpListRVGzip)
}

// measures says whether the run measures server operation o.
func (c Config) measures(o Operation) bool { return len(c.Only) == 0 || slices.Contains(c.Only, o) }
