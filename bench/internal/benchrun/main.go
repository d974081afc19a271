// Command benchrun runs the benchmark harness (internal/bench) and writes its report as JSON. TestHarness
// builds and runs it rather than calling bench.Run itself, so that the load generator never runs
// under the test binary's -race instrumentation (CI tests with -race), which would slow the etcd
// side's clientv3 decoding several times over and distort every ratio.
//
//	benchrun -apictl ./apictl -etcd ./benchetcd -duration 5s -json report.json
//	benchrun -apictl ./apictl -etcd ./benchetcd -upstream ./apiextensions-apiserver -json peer.json
//	benchrun -apictl ./apictl -etcd ./benchetcd -before ./apictl-old -only "LIST gzip" -json before.json
//
// Progress goes to stderr. It exits 1 when the run cannot be completed or leaves goroutines behind;
// judging the numbers is the caller's job (bench.Report.Check).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/apictl/apictl/internal/bench"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "benchrun:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("benchrun", flag.ContinueOnError)
	var cfg bench.Config
	var jsonPath string
	fs.StringVar(&cfg.Apictl, "apictl", "", "the apictl binary to measure")
	fs.StringVar(&cfg.Etcd, "etcd", "", "the etcd program (bench/internal/benchetcd)")
	fs.DurationVar(&cfg.Duration, "duration", bench.DefaultDuration, "recorded length of each measurement")
	fs.DurationVar(&cfg.Settle, "settle", bench.DefaultSettle, "idle time before each memory reading")
	fs.StringVar(&cfg.Kubectl, "kubectl", "", "the kubectl binary to time (default: kubectl on PATH; none skips that measurement)")
	fs.IntVar(&cfg.KubectlRuns, "kubectl-runs", bench.DefaultKubectlRuns, "timed runs of kubectl, after one warm-up")
	fs.BoolVar(&cfg.Short, "short", false, "mark the report as a short run")
	fs.BoolVar(&cfg.Authz, "authz", false, "also compare a non-superuser's throughput under RBAC with AlwaysAllow")
	fs.IntVar(&cfg.CRDs, "crds", 0, "install this many CRDs through the API before measuring")
	fs.IntVar(&cfg.NamespaceCycles, "namespace-cycles", 0, "also create and delete this many namespaces on a server of their own, reading its memory")
	fs.IntVar(&cfg.ScaleObjects, "scale-objects", 0, "also seed this many objects into a server of their own, restart it and measure it loaded (issue 22)")
	fs.BoolVar(&cfg.Features, "features", false, "also measure the operations on a replica with RBAC, Metadata audit, a ValidatingAdmissionPolicy and encryption at rest on (issue 17)")
	fs.StringVar(&cfg.ScaleKind, "scale-kind", bench.ScaleCustom, fmt.Sprintf("what the scale measurement seeds: one of %q", bench.ScaleKinds()))
	fs.Func("scale-representations", fmt.Sprintf("also measure the scale measurement's LISTs in these representations, comma separated: some of %q, or all", bench.ScaleRepresentations()),
		func(v string) error {
			cfg.ScaleRepresentations = append(cfg.ScaleRepresentations, strings.Split(v, ",")...)
			return nil
		})
	fs.BoolVar(&cfg.ScaleStress, "scale-stress", false, "also run issue 38's abuse of the loaded server: YAML LISTs whose clients go, and 32 curl LISTs at once")
	fs.BoolVar(&cfg.ScaleGuard, "scale-guard", false, "judge the scale measurement's guards (CI's version)")
	fs.StringVar(&cfg.ScaleData, "scale-data", "", "keep the scale measurement's seeded data in this directory and, when it holds as many objects already, restart from it without seeding")
	fs.StringVar(&cfg.Upstream, "upstream", "", "compare apictl with this upstream apiextensions-apiserver binary, and measure nothing else (issue 17's peer mode)")
	fs.StringVar(&cfg.Before, "before", "", "compare apictl with this earlier apictl binary, side by side on one etcd, LISTs asking for gzip included, and measure nothing else")
	fs.StringVar(&cfg.WorkDir, "work-dir", "", "where to make the run's temporary directory (default the system's)")
	fs.StringVar(&jsonPath, "json", "", "file to write the report to, as JSON")
	fs.Func("only", "measure only these server operations, comma separated (GET, LIST, \"LIST rv=0\", CREATE, UPDATE; with -before also \"LIST gzip\", \"LIST rv=0 gzip\"), and skip start-up, memory, overload and kubectl",
		func(v string) error {
			for _, o := range strings.Split(v, ",") {
				cfg.Only = append(cfg.Only, bench.Operation(strings.TrimSpace(o)))
			}
			return nil
		})
	if err := fs.Parse(args); err != nil {
		return err
	}
	if jsonPath == "" {
		return errors.New("-json is required")
	}
	cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()

	goroutines := runtime.NumGoroutine()
	report, err := bench.Run(ctx, cfg)
	if err != nil {
		return err
	}
	if err := report.WriteJSONFile(jsonPath); err != nil {
		return err
	}
	return checkGoroutines(goroutines)
}

// checkGoroutines fails if more goroutines than before the run remain once connections that are
// closing have had a few seconds to finish: Run must stop everything it started.
func checkGoroutines(before int) error {
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			return fmt.Errorf("%d goroutines left after the run, %d before:\n%s", runtime.NumGoroutine(), before, buf)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}
