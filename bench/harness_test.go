package bench_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apictl/apictl/cmd/apictl/app"
	"github.com/apictl/apictl/internal/bench"
)

// The harness runs binaries built from source, which go test's cache cannot see; depending on the
// command package makes the cache key change whenever apictl's code does.
var _ = app.Main

// Environment variables that steer a run (see doc.go).
const (
	envDuration  = "BENCH_DURATION"
	envFull      = "BENCH_FULL"
	envJSON      = "BENCH_JSON"
	envGuard     = "BENCH_GUARD"
	envOnly      = "BENCH_ONLY"
	envAuthz     = "BENCH_AUTHZ"
	envCRDs      = "BENCH_CRDS"
	envChurn     = "BENCH_NAMESPACE_CYCLES"
	envScale     = "BENCH_SCALE_OBJECTS"
	envScaleDir  = "BENCH_SCALE_DATA"
	envScaleKind = "BENCH_SCALE_KIND"
	envScaleRepr = "BENCH_SCALE_REPRESENTATIONS"
	envStress    = "BENCH_SCALE_STRESS"
	envFeatures  = "BENCH_FEATURES"
	envApictl    = "BENCH_APICTL"
	envPeer      = "BENCH_PEER"
	envBefore    = "BENCH_BEFORE"
)

// upstreamPackage is the upstream server the peer mode compares with, built at go.mod's version.
const upstreamPackage = "k8s.io/apiextensions-apiserver"

// settings are what the environment asks of a run.
type settings struct {
	short    bool
	duration time.Duration
	jsonPath string
	guard    bool
	only     string
	authz    bool
	// features measures a features-on replica too (BENCH_FEATURES), in every attempt.
	features bool
	crds     string
	churn    string
	// scale is the scale measurement's number of objects (0: none); scaleGuard judges its guards,
	// for CI's version with BENCH_GUARD=1.
	scale      int
	scaleGuard bool
	// scaleData keeps the scale measurement's seeded data for the next run (BENCH_SCALE_DATA).
	scaleData string
	// scaleKind is what the scale measurement seeds (BENCH_SCALE_KIND, one of bench.ScaleKinds).
	scaleKind string
	// scaleRepr are the representations its LISTs are measured in besides compact JSON
	// (BENCH_SCALE_REPRESENTATIONS: some of bench.ScaleRepresentations, comma separated, or all).
	scaleRepr string
	// scaleStress runs issue 38's abuse of the loaded server (BENCH_SCALE_STRESS).
	scaleStress bool
	// apictl is a prebuilt binary to measure instead of one built from this tree.
	apictl string
	// peer runs only the comparison with the upstream apiextensions-apiserver (BENCH_PEER).
	peer bool
	// before runs only the comparison with an earlier apictl binary (BENCH_BEFORE).
	before string
}

func readSettings(short bool, getenv func(string) string) (settings, error) {
	// Short unless asked for a full run: the harness sits in every `go test ./...`, which must stay quick.
	s := settings{
		short:       short || !isTrue(getenv(envFull)),
		jsonPath:    getenv(envJSON),
		guard:       isTrue(getenv(envGuard)),
		only:        getenv(envOnly),
		authz:       isTrue(getenv(envAuthz)),
		features:    isTrue(getenv(envFeatures)),
		crds:        getenv(envCRDs),
		churn:       getenv(envChurn),
		apictl:      getenv(envApictl),
		scaleData:   getenv(envScaleDir),
		scaleKind:   getenv(envScaleKind),
		scaleRepr:   getenv(envScaleRepr),
		scaleStress: isTrue(getenv(envStress)),
		peer:        isTrue(getenv(envPeer)),
		before:      getenv(envBefore),
	}
	s.duration = bench.DefaultDuration
	if s.short {
		s.duration = bench.ShortDuration
	}
	if s.crds != "" {
		if n, err := strconv.Atoi(s.crds); err != nil || n <= 0 {
			return s, fmt.Errorf("%s=%q: want a positive number of CRDs such as 1000", envCRDs, s.crds)
		}
	}
	if s.churn != "" {
		if n, err := strconv.Atoi(s.churn); err != nil || n < 10 {
			return s, fmt.Errorf("%s=%q: want a number of namespace cycles of at least 10, such as 100000", envChurn, s.churn)
		}
	}
	if v := getenv(envScale); v != "" {
		n, err := parseScale(v)
		if err != nil {
			return s, err
		}
		s.scale, s.scaleGuard = n, s.guard && v == "ci"
	}
	if s.scaleKind != "" && !slices.Contains(bench.ScaleKinds(), s.scaleKind) {
		return s, fmt.Errorf("%s=%q: want one of %q", envScaleKind, s.scaleKind, bench.ScaleKinds())
	}
	if v := getenv(envDuration); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return s, fmt.Errorf("%s=%q: want a positive duration such as 5s or 300ms", envDuration, v)
		}
		s.duration = d
	}
	return s, nil
}

// parseScale reads BENCH_SCALE_OBJECTS: a number of objects of at least bench.MinScaleObjects, 1 or
// 1m for issue 22's million, or ci for CI's smaller version.
func parseScale(v string) (int, error) {
	switch strings.ToLower(v) {
	case "1", "1m":
		return bench.DefaultScaleObjects, nil
	case "ci":
		return bench.ScaleCIObjects, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < bench.MinScaleObjects {
		return 0, fmt.Errorf("%s=%q: want a number of objects of at least %d, 1m for a million, or ci", envScale, v, bench.MinScaleObjects)
	}
	return n, nil
}

func isTrue(v string) bool {
	b, err := strconv.ParseBool(v)
	return err == nil && b
}

func TestHarness(t *testing.T) {
	s, err := readSettings(testing.Short(), os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	limit := 15 * time.Minute
	if s.churn != "" || s.scale > bench.ScaleCIObjects {
		// 100,000 namespace cycles take up to an hour on a small machine, a million objects a quarter
		// of one (go test -timeout too).
		limit = 2 * time.Hour
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	dir := t.TempDir()
	runner := build(ctx, t, dir, "benchrun", "github.com/apictl/apictl/bench/internal/benchrun")
	apictl := s.apictl
	if apictl == "" {
		apictl = build(ctx, t, dir, "apictl", "github.com/apictl/apictl/cmd/apictl")
	}
	args := []string{
		"-apictl", apictl,
		"-etcd", build(ctx, t, dir, "benchetcd", "github.com/apictl/apictl/bench/internal/benchetcd"),
		"-duration", s.duration.String(),
		"-work-dir", dir,
	}
	if s.short {
		args = append(args, "-short", "-settle", "200ms", "-kubectl-runs", "3")
	}
	if s.features {
		args = append(args, "-features")
	}
	if s.peer || s.before != "" {
		var peer []string
		if s.before != "" {
			peer = append(args[:len(args):len(args)], "-before", s.before)
		} else {
			// Building the upstream server takes minutes on a cold cache, which is why it is not in
			// CI's run.
			t.Logf("building %s at go.mod's version", upstreamPackage)
			peer = append(args[:len(args):len(args)], "-upstream", build(ctx, t, dir, "apiextensions-apiserver", upstreamPackage))
		}
		if s.only != "" {
			peer = append(peer, "-only", s.only)
		}
		report := runHarness(ctx, t, runner, filepath.Join(dir, "peer.json"), peer)
		if err := report.WriteText(t.Output()); err != nil {
			t.Fatal(err)
		}
		if s.jsonPath != "" {
			if err := report.WriteJSONFile(s.jsonPath); err != nil {
				t.Fatal(err)
			}
		}
		if err := report.Check(false); err != nil {
			t.Error(err)
		}
		return
	}
	only := args
	if s.authz {
		only = append(only[:len(only):len(only)], "-authz")
	}
	if s.only != "" {
		only = append(only[:len(only):len(only)], "-only", s.only)
	}
	if s.crds != "" {
		args = append(args, "-crds", s.crds)
		only = append(only[:len(only):len(only)], "-crds", s.crds)
	}
	if s.churn != "" {
		only = append(only[:len(only):len(only)], "-namespace-cycles", s.churn)
	}
	if s.scale > 0 {
		only = append(only[:len(only):len(only)], "-scale-objects", strconv.Itoa(s.scale))
		if s.scaleGuard {
			only = append(only, "-scale-guard")
		}
		if s.scaleData != "" {
			only = append(only, "-scale-data", s.scaleData)
		}
		if s.scaleKind != "" {
			only = append(only, "-scale-kind", s.scaleKind)
		}
		if s.scaleRepr != "" {
			only = append(only, "-scale-representations", s.scaleRepr)
		}
		if s.scaleStress {
			only = append(only, "-scale-stress")
		}
	}
	report := runHarness(ctx, t, runner, filepath.Join(dir, "report.json"), only)
	// A guarded run measures again what fell below its floor and keeps the best attempt, so that
	// only a regression that shows every time fails it (bench.GuardAttempts).
	for attempt := 2; s.guard && attempt <= bench.GuardAttempts; attempt++ {
		ops := report.Floored()
		if len(ops) == 0 {
			break
		}
		names := make([]string, len(ops))
		for i, op := range ops {
			names[i] = string(op)
		}
		t.Logf("below the floor: %s; measuring again (attempt %d of %d)", strings.Join(names, ", "), attempt, bench.GuardAttempts)
		again := append(args[:len(args):len(args)], "-only", strings.Join(names, ","))
		report.KeepBest(runHarness(ctx, t, runner, filepath.Join(dir, fmt.Sprintf("report-%d.json", attempt)), again))
	}
	if err := report.WriteText(t.Output()); err != nil {
		t.Fatal(err)
	}
	if s.jsonPath != "" {
		if err := report.WriteJSONFile(s.jsonPath); err != nil {
			t.Fatal(err)
		}
	}
	if err := report.Check(s.guard); err != nil {
		t.Error(err)
	}
}

// build compiles pkg into dir, without -race whatever the test binary has: the server, etcd and the
// load generator must run at their real speed.
func build(ctx context.Context, t *testing.T, dir, name, pkg string) string {
	t.Helper()
	out := filepath.Join(dir, name)
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v\n%s", pkg, err, b)
	}
	return out
}

// runHarness runs the harness in a binary of its own, built without -race whatever this test has
// (see bench/internal/benchrun), with its progress going to the test's output as it comes, and
// returns the report it wrote to jsonPath.
func runHarness(ctx context.Context, t *testing.T, runner, jsonPath string, args []string) *bench.Report {
	t.Helper()
	cmd := exec.CommandContext(ctx, runner, append(args[:len(args):len(args)], "-json", jsonPath)...)
	cmd.Stdout, cmd.Stderr = t.Output(), t.Output()
	cmd.SysProcAttr = runnerSysProcAttr()
	// benchrun stops its server and etcd on SIGTERM; a kill would leave them to their own
	// parent-death signal.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = time.Minute
	if err := cmd.Run(); err != nil {
		t.Fatalf("running the harness: %v", err)
	}
	return readReport(t, jsonPath)
}

func readReport(t *testing.T, path string) *bench.Report {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r bench.Report
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("reading the report: %v", err)
	}
	return &r
}

func TestReadSettings(t *testing.T) {
	tests := []struct {
		name    string
		short   bool
		env     map[string]string
		want    settings
		wantErr string
	}{
		{name: "short by default", want: settings{short: true, duration: 300 * time.Millisecond}},
		{name: "BENCH_FULL", env: map[string]string{"BENCH_FULL": "1"}, want: settings{duration: 5 * time.Second}},
		{name: "-short wins over BENCH_FULL", short: true, env: map[string]string{"BENCH_FULL": "1"}, want: settings{short: true, duration: 300 * time.Millisecond}},
		{name: "duration wins over short", env: map[string]string{"BENCH_DURATION": "2s"}, want: settings{short: true, duration: 2 * time.Second}},
		{name: "guard and JSON", env: map[string]string{"BENCH_FULL": "true", "BENCH_GUARD": "1", "BENCH_JSON": "/tmp/r.json"},
			want: settings{duration: 5 * time.Second, guard: true, jsonPath: "/tmp/r.json"}},
		{name: "only", env: map[string]string{"BENCH_ONLY": "GET,CREATE"}, want: settings{short: true, duration: 300 * time.Millisecond, only: "GET,CREATE"}},
		{name: "bad duration", env: map[string]string{"BENCH_DURATION": "5"}, wantErr: `BENCH_DURATION="5": want a positive duration such as 5s or 300ms`},
		{name: "negative duration", env: map[string]string{"BENCH_DURATION": "-1s"}, wantErr: "want a positive duration"},
		{name: "crds", env: map[string]string{"BENCH_CRDS": "1000"}, want: settings{short: true, duration: 300 * time.Millisecond, crds: "1000"}},
		{name: "bad crds", env: map[string]string{"BENCH_CRDS": "many"}, wantErr: `BENCH_CRDS="many": want a positive number of CRDs such as 1000`},
		{name: "scale of a million", env: map[string]string{"BENCH_SCALE_OBJECTS": "1m"}, want: settings{short: true, duration: 300 * time.Millisecond, scale: 1_000_000}},
		{name: "scale 1 is a million", env: map[string]string{"BENCH_SCALE_OBJECTS": "1"}, want: settings{short: true, duration: 300 * time.Millisecond, scale: 1_000_000}},
		{name: "scale of some", env: map[string]string{"BENCH_SCALE_OBJECTS": "250000"}, want: settings{short: true, duration: 300 * time.Millisecond, scale: 250_000}},
		{name: "scale data kept", env: map[string]string{"BENCH_SCALE_OBJECTS": "1m", "BENCH_SCALE_DATA": "/tmp/scale"},
			want: settings{short: true, duration: 300 * time.Millisecond, scale: 1_000_000, scaleData: "/tmp/scale"}},
		{name: "scale ci unguarded", env: map[string]string{"BENCH_SCALE_OBJECTS": "ci"}, want: settings{short: true, duration: 300 * time.Millisecond, scale: bench.ScaleCIObjects}},
		{name: "scale ci guarded", env: map[string]string{"BENCH_SCALE_OBJECTS": "ci", "BENCH_GUARD": "1"},
			want: settings{short: true, duration: 300 * time.Millisecond, guard: true, scale: bench.ScaleCIObjects, scaleGuard: true}},
		{name: "a sized scale run is not guarded", env: map[string]string{"BENCH_SCALE_OBJECTS": "100000", "BENCH_GUARD": "1"},
			want: settings{short: true, duration: 300 * time.Millisecond, guard: true, scale: 100_000}},
		{name: "scale too small", env: map[string]string{"BENCH_SCALE_OBJECTS": "999"}, wantErr: `BENCH_SCALE_OBJECTS="999": want a number of objects of at least 1000`},
		{name: "scale of ConfigMaps", env: map[string]string{"BENCH_SCALE_OBJECTS": "1m", "BENCH_SCALE_KIND": "configmaps"},
			want: settings{short: true, duration: 300 * time.Millisecond, scale: 1_000_000, scaleKind: bench.ScaleConfigMaps}},
		{name: "scale under stress", env: map[string]string{"BENCH_SCALE_OBJECTS": "1m", "BENCH_SCALE_STRESS": "1"},
			want: settings{short: true, duration: 300 * time.Millisecond, scale: 1_000_000, scaleStress: true}},
		{name: "scale of an unknown kind", env: map[string]string{"BENCH_SCALE_KIND": "pods"}, wantErr: `BENCH_SCALE_KIND="pods": want one of ["custom" "configmaps"]`},
		{name: "features on", env: map[string]string{"BENCH_FEATURES": "1"}, want: settings{short: true, duration: 300 * time.Millisecond, features: true}},
		{name: "peer", env: map[string]string{"BENCH_PEER": "1", "BENCH_DURATION": "2s"}, want: settings{short: true, duration: 2 * time.Second, peer: true}},
		{name: "before", env: map[string]string{"BENCH_BEFORE": "/tmp/apictl-old", "BENCH_ONLY": "LIST gzip"}, want: settings{short: true, duration: 300 * time.Millisecond, before: "/tmp/apictl-old", only: "LIST gzip"}},
		{name: "prebuilt apictl", env: map[string]string{"BENCH_APICTL": "/tmp/apictl"}, want: settings{short: true, duration: 300 * time.Millisecond, apictl: "/tmp/apictl"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readSettings(tt.short, func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}
