// Package bench measures `apictl serve` against the etcd it stores in: the same reads and writes done
// through the server (over plain HTTP/1.1 and over TLS with HTTP/2) and directly with clientv3, at
// several concurrencies, in one run, with the ratios issue 8 sets targets for; plus the server's
// start-up time and resident memory, its answers and memory under an overload of ten times its
// --max-requests-inflight, and the time `kubectl get` takes to print the listed objects.
//
// Everything runs in child processes so that each side's numbers are its own: the server is the real
// apictl binary, and etcd is a single member (fsync on) in a process of its own that both the server
// and the harness's clientv3 talk to. The server's allocations are read from its own /metrics.
//
// Run returns a Report; WriteText prints it for people, WriteJSON for machines, and Check fails a run
// whose requests failed or, as a guard against gross regressions, whose ratios fell below half of
// their targets.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"
)

// Run measures everything once. It fails when a set-up step fails (a binary that does not start,
// data that does not look as expected); failed requests during measurements are counted in the
// report instead, for Check to judge. Every process and directory it made is gone when it returns.
func Run(ctx context.Context, cfg Config) (_ *Report, err error) {
	cfg, err = cfg.complete()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(cfg.WorkDir, "apictl-bench-")
	if err != nil {
		return nil, fmt.Errorf("making the benchmark's directory: %w", err)
	}
	defer func() {
		if e := os.RemoveAll(dir); e != nil {
			err = errors.Join(err, fmt.Errorf("removing the benchmark's directory: %w", e))
		}
	}()
	env := currentEnvironment()
	env.Warmup, env.Duration, env.Short = cfg.Warmup, cfg.Duration, cfg.Short
	report := &Report{Environment: env}
	if cfg.Before != "" {
		if report.Peer, err = compareBefore(ctx, cfg, filepath.Join(dir, "before")); err != nil {
			return nil, err
		}
		return report, nil
	}
	if cfg.Upstream != "" {
		report.Peer, err = comparePeer(ctx, cfg, filepath.Join(dir, "peer"))
		if err != nil {
			return nil, err
		}
		return report, nil
	}

	if len(cfg.Only) == 0 {
		if report.Startup, report.Memory, err = startupAndMemory(ctx, cfg, filepath.Join(dir, "embedded")); err != nil {
			return nil, err
		}
	}
	if cfg.NamespaceCycles > 0 {
		if report.Churn, err = namespaceChurn(ctx, cfg, filepath.Join(dir, "churn")); err != nil {
			return nil, err
		}
	}
	if cfg.ScaleObjects > 0 {
		scaleDir := filepath.Join(dir, "scale")
		if cfg.ScaleData != "" {
			scaleDir = cfg.ScaleData
		}
		if report.Scale, err = measureScale(ctx, cfg, scaleDir); err != nil {
			return nil, err
		}
	}
	if err := compare(ctx, cfg, filepath.Join(dir, "compare"), report); err != nil {
		return nil, err
	}
	report.Ratios = computeRatios(report.Results, Targets())
	return report, nil
}

// readyPollInterval is how often /readyz is asked while the start-up time is measured: the
// measurement is at most this much late.
const readyPollInterval = 2 * time.Millisecond

// startupAndMemory starts `apictl serve` on its embedded etcd, as users run it, StartupRuns times
// on fresh data directories, and measures the memory of the last one, idle and then loaded.
func startupAndMemory(ctx context.Context, cfg Config, dir string) (Startup, Memory, error) {
	startup := Startup{Target: StartupTarget}
	mem := Memory{Objects: cfg.MemoryObjects, IdleTarget: IdleRSSTarget, LoadedTarget: LoadedRSSTarget}
	var last *server
	for i := range cfg.StartupRuns {
		dataDir := filepath.Join(dir, "run-"+strconv.Itoa(i))
		if err := os.MkdirAll(dataDir, 0o700); err != nil {
			return startup, mem, fmt.Errorf("measuring start-up: %w", err)
		}
		s, took, err := startServer(ctx, cfg.Apictl, filepath.Join(dataDir, "data"), nil, readyPollInterval)
		if err != nil {
			return startup, mem, fmt.Errorf("measuring start-up: %w", err)
		}
		cfg.Logger.Info("apictl serve ready", "run", i+1, "after", took)
		startup.Runs = append(startup.Runs, took)
		if i < cfg.StartupRuns-1 {
			if err := s.stop(); err != nil {
				return startup, mem, err
			}
			continue
		}
		last = s
	}
	startup.Median = median(startup.Runs)
	err := measureMemory(ctx, cfg, last, &mem)
	return startup, mem, errors.Join(err, last.stop())
}

func measureMemory(ctx context.Context, cfg Config, s *server, mem *Memory) error {
	if err := sleep(ctx, cfg.Settle); err != nil {
		return err
	}
	idle, err := s.proc.memoryDetail()
	if err != nil {
		return err
	}
	mem.IdleRSS, mem.IdleAnon, mem.IdleFile = idle.RSS, idle.Anon, idle.File
	h, err := s.target(ViaHTTP1, seedConcurrency)
	if err != nil {
		return err
	}
	defer h.client.CloseIdleConnections()
	cfg.Logger.Info("storing objects for the memory measurement", "objects", cfg.MemoryObjects)
	began := time.Now()
	if err := createNamespace(ctx, h, memoryNamespace); err != nil {
		return err
	}
	if err := createConfigMaps(ctx, h, memoryNamespace, cfg.MemoryObjects, func(i int) string { return "memory-" + strconv.Itoa(i) }); err != nil {
		return err
	}
	cfg.Logger.Info("objects stored", "objects", cfg.MemoryObjects, "took", time.Since(began))
	if err := sleep(ctx, cfg.Settle); err != nil {
		return err
	}
	mem.LoadedRSS, mem.PeakRSS, err = s.proc.memory()
	return err
}

// compare runs the server on the harness's etcd and measures both at every concurrency into
// report.Results. Unless the run measures only some operations, kubectl then lists the seeded
// objects from that server, and a second server on the same etcd is overloaded.
func compare(ctx context.Context, cfg Config, dir string, report *Report) (err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("preparing the comparison: %w", err)
	}
	etcd, err := startEtcd(ctx, cfg.Etcd, dir)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, etcd.proc.stop()) }()
	cli, err := etcd.client()
	if err != nil {
		return err
	}
	defer cli.Close()
	s, _, err := startServer(ctx, cfg.Apictl, filepath.Join(dir, "server"), etcd.urls, 10*time.Millisecond)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.stop()) }()

	h, err := s.target(ViaHTTP1, seedConcurrency)
	if err != nil {
		return err
	}
	defer h.client.CloseIdleConnections()
	cfg.Logger.Info("seeding the server", "listed", cfg.ListObjects, "updated", cfg.maxConcurrency())
	if err := seed(ctx, h, cfg.ListObjects, cfg.maxConcurrency()); err != nil {
		return err
	}
	if cfg.CRDs > 0 {
		cfg.Logger.Info("installing CRDs", "crds", cfg.CRDs)
		if err := installCRDs(ctx, h, cfg.CRDs); err != nil {
			return err
		}
		report.Environment.CRDs = cfg.CRDs
	}
	value, others, err := verify(ctx, h, cli, cfg.ListObjects)
	if err != nil {
		return err
	}
	scrapeCost, err := s.scrapeCost(ctx)
	if err != nil {
		return err
	}
	e := etcdTarget{cli: cli, value: value, listed: cfg.ListObjects + len(others)}
	w := window{Warmup: cfg.Warmup, Duration: cfg.Duration}
	var features *featuresServer
	if cfg.Features {
		cfg.Logger.Info("starting the features-on server")
		if features, err = newFeaturesServer(ctx, cfg, etcd.urls, filepath.Join(dir, "features"), s.pkiDir()); err != nil {
			return err
		}
		defer func() { err = errors.Join(err, features.s.stop()) }()
	}
	for _, c := range cfg.Concurrency {
		rs, err := measureConcurrency(ctx, cfg, s, features, e, c, w, scrapeCost)
		if err != nil {
			return err
		}
		report.Results = append(report.Results, rs...)
	}
	if cfg.Authz {
		cfg.Logger.Info("comparing RBAC with AlwaysAllow")
		if report.Authz, err = measureAuthz(ctx, cfg, etcd.urls, filepath.Join(dir, "authz"), s.pkiDir()); err != nil {
			return err
		}
	}
	if len(cfg.Only) > 0 {
		return nil
	}
	// The measurements wrote only outside the listed namespace: it still holds exactly the seeded
	// objects, which kubectl must print and the overloaded server lists.
	cfg.Logger.Info("timing kubectl get", "objects", cfg.ListObjects)
	if report.Kubectl, err = measureKubectl(ctx, cfg, s, filepath.Join(dir, "kubectl"), others); err != nil {
		return err
	}
	// The overloaded server has the machine to itself, and the same data whatever the run's length:
	// the listed objects, without the measurements' writes.
	if err := s.stop(); err != nil {
		return err
	}
	if err := clearWrites(ctx, cli); err != nil {
		return err
	}
	report.Overload, err = measureOverload(ctx, cfg, etcd.urls, filepath.Join(dir, "overload"))
	return err
}

// plan orders the measurements at one concurrency: each etcd operation runs right before the server
// operations compared with it, so that a slow spell of a shared machine hits both sides of a ratio.
var plan = []struct {
	etcd   Operation
	server []Operation
}{
	{OpEtcdGet, []Operation{OpGet}},
	{OpEtcdRange, []Operation{OpList, OpListRV}},
	{OpEtcdCreate, []Operation{OpCreate}},
	{OpEtcdCAS, []Operation{OpUpdate}},
}

// measureConcurrency runs the plan at concurrency c, with fresh HTTP clients for both ports, and for
// the features-on server when there is one.
func measureConcurrency(ctx context.Context, cfg Config, s *server, features *featuresServer, e etcdTarget, c int, w window, scrapeCost float64) ([]Result, error) {
	label := "c" + strconv.Itoa(c)
	etcdOps := etcdWorkers(e, label)
	serverOps := map[Via]map[Operation]newWorker{}
	vias := []Via{ViaHTTP1, ViaHTTP2}
	servers := map[Via]*server{ViaHTTP1: s, ViaHTTP2: s}
	scrapeCosts := map[Via]float64{ViaHTTP1: scrapeCost, ViaHTTP2: scrapeCost}
	for _, via := range vias {
		h, err := s.target(via, c)
		if err != nil {
			return nil, err
		}
		defer h.client.CloseIdleConnections()
		serverOps[via] = serverWorkers(h, configMapKind(), viaLabel(via)+"-"+label)
	}
	if features != nil {
		h, err := features.s.authzTarget(ctx, c)
		if err != nil {
			return nil, err
		}
		defer h.client.CloseIdleConnections()
		vias = append(vias, ViaFeatures)
		servers[ViaFeatures], scrapeCosts[ViaFeatures] = features.s, features.scrapeCost
		serverOps[ViaFeatures] = serverWorkers(h, configMapKind(), viaLabel(ViaFeatures)+"-"+label)
	}
	var results []Result
	for _, step := range plan {
		ops := slices.DeleteFunc(slices.Clone(step.server), func(o Operation) bool { return !cfg.measures(o) })
		if len(ops) == 0 {
			continue
		}
		cfg.Logger.Info("measuring", "operation", step.etcd, "via", ViaEtcd, "concurrency", c)
		t, err := measure(ctx, c, w, etcdOps[step.etcd])
		if err != nil {
			return nil, fmt.Errorf("etcd %s at concurrency %d: %w", step.etcd, c, err)
		}
		results = append(results, result(step.etcd, ViaEtcd, c, t, nil))
		for _, o := range ops {
			for _, via := range vias {
				cfg.Logger.Info("measuring", "operation", o, "via", via, "concurrency", c)
				r, err := measureServer(ctx, servers[via], serverOps[via][o], o, via, c, w, scrapeCosts[via])
				if err != nil {
					return nil, err
				}
				results = append(results, r)
			}
		}
	}
	return results, nil
}

// measureServer measures one server operation and the server's allocations while it ran.
func measureServer(ctx context.Context, s *server, prepare newWorker, o Operation, via Via, c int, w window, scrapeCost float64) (Result, error) {
	before, err := s.mallocs(ctx)
	if err != nil {
		return Result{}, err
	}
	t, err := measure(ctx, c, w, prepare)
	if err != nil {
		return Result{}, fmt.Errorf("%s via %s at concurrency %d: %w", o, via, c, err)
	}
	after, err := s.mallocs(ctx)
	if err != nil {
		return Result{}, err
	}
	var allocs *float64
	if t.Issued > 0 {
		a := max(after-before-scrapeCost, 0) / float64(t.Issued)
		allocs = &a
	}
	return result(o, via, c, t, allocs), nil
}

func result(o Operation, via Via, c int, t tally, allocs *float64) Result {
	r := Result{
		Operation: o, Via: via, Concurrency: c,
		Requests: t.Completed, Failed: t.Failed,
		PerSecond: t.PerSecond(), P50: t.Percentile(50), P99: t.Percentile(99),
		AllocsPerRequest: allocs, Duration: t.Elapsed,
	}
	if t.FirstError != nil {
		r.FirstError = t.FirstError.Error()
	}
	return r
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// drain reads and closes a response body, so that its connection can be reused.
func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// viaLabel is a short name for via in the names of created objects.
func viaLabel(via Via) string {
	switch via {
	case ViaHTTP2:
		return "h2"
	case ViaFeatures:
		return "hf"
	}
	return "h1"
}
