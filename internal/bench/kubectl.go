package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/apictl/apictl/pkg/certs"
)

// KubectlTarget is issue 8's goal for `kubectl get` of the listed objects as a table: faster than
// against kube-apiserver, 0.28 s.
const KubectlTarget = 280 * time.Millisecond

const (
	// kubectlWarmups is how many runs of each command go unrecorded first: the first `kubectl get`
	// fills kubectl's discovery cache, as any user's first one does.
	kubectlWarmups = 1
	// kubectlRunTimeout bounds one run of kubectl.
	kubectlRunTimeout = 30 * time.Second
)

// kubectlInvocation says how kubectl runs, printed with the report.
const kubectlInvocation = "the compared server over its insecure port (-s URL, KUBECONFIG naming no file) and over TLS " +
	"(its admin kubeconfig: HTTP/2, client certificate); discovery cache in the run's directory, filled by the warm-up as by any user's first run"

// Kubectl is how long kubectl takes to print the listed objects as a table from the compared server,
// and how much of that is kubectl starting.
type Kubectl struct {
	// Skipped says why kubectl was not measured; everything else is then empty.
	Skipped string `json:"skipped,omitempty"`
	// Version is what `kubectl version --client` says of itself; Invocation says how kubectl was run.
	Version    string `json:"version,omitempty"`
	Invocation string `json:"invocation,omitempty"`
	// Objects is how many rows the table must have.
	Objects int `json:"objects"`
	// Warmups runs of each command went unrecorded before Runs timed ones.
	Warmups int `json:"warmups"`
	Runs    int `json:"runs"`
	// Get times `kubectl get configmaps -n <the listed namespace>` (table output, default flags)
	// over the insecure port, GetTLS the same over TLS with the admin kubeconfig; Client times
	// `kubectl version --client`: kubectl's own start-up, which both include.
	Get    Timing `json:"get"`
	GetTLS Timing `json:"getTLS"`
	Client Timing `json:"versionClient"`
	// Failed counts runs, warm-ups included, that exited with an error or printed a wrong table;
	// FirstError is the first of them.
	Failed     int    `json:"failed"`
	FirstError string `json:"firstError,omitempty"`
	// Target is issue 8's goal for each get's median (KubectlTarget).
	Target time.Duration `json:"targetNanoseconds"`
}

// kubectlCommands is how many commands a round runs.
const kubectlCommands = 3

// Timing is the wall-clock time of several runs of one command.
type Timing struct {
	Runs   []time.Duration `json:"runsNanoseconds"`
	Median time.Duration   `json:"medianNanoseconds"`
	Min    time.Duration   `json:"minNanoseconds"`
	Max    time.Duration   `json:"maxNanoseconds"`
}

func newTiming(runs []time.Duration) Timing {
	if len(runs) == 0 {
		return Timing{}
	}
	return Timing{Runs: runs, Median: median(runs), Min: slices.Min(runs), Max: slices.Max(runs)}
}

// kubectlCommand is one command a round of the kubectl measurement runs.
type kubectlCommand struct {
	env  []string
	args []string
	// check judges the output; nil accepts any.
	check func([]byte) error
	// runs collects the recorded runs' times.
	runs []time.Duration
}

// measureKubectl times kubectl against the server s, which serves the listed objects: Warmups and
// then Runs rounds, each running `kubectl version --client` and then `kubectl get` over both ports
// back to back, so that a slow spell of the machine hits all three. kubectl's state (its discovery
// cache) stays in dir.
func measureKubectl(ctx context.Context, cfg Config, s *server, dir string, others []string) (*Kubectl, error) {
	k := &Kubectl{Objects: cfg.ListObjects, Warmups: kubectlWarmups, Runs: cfg.KubectlRuns, Target: KubectlTarget, Invocation: kubectlInvocation}
	binary := cfg.Kubectl
	if binary == "" {
		path, err := exec.LookPath("kubectl")
		if err != nil {
			k.Skipped = "kubectl is not on PATH"
			return k, nil
		}
		binary = path
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("measuring kubectl: %w", err)
	}
	names := make([]string, cfg.ListObjects, cfg.ListObjects+len(others))
	for i := range names {
		names[i] = listName(i)
	}
	names = append(names, others...)
	table := func(out []byte) error { return checkKubectlTable(out, names) }
	cache := filepath.Join(dir, "cache")
	noKubeconfig := kubectlEnv(os.Environ(), filepath.Join(dir, "no-kubeconfig"))
	// `apictl serve` writes the admin kubeconfig beside the admin certificate, pointing at its
	// secure port.
	adminKubeconfig := kubectlEnv(os.Environ(), filepath.Join(s.pkiDir(), certs.NameAdmin+".kubeconfig"))
	cmds := [kubectlCommands]*kubectlCommand{
		{env: noKubeconfig, args: []string{"version", "--client"}},
		{env: noKubeconfig, args: kubectlGetArgs(cache, "-s", s.insecureURL), check: table},
		{env: adminKubeconfig, args: kubectlGetArgs(cache), check: table},
	}
	for round := range kubectlWarmups + cfg.KubectlRuns {
		for _, c := range cmds {
			out, took, err := runKubectl(ctx, binary, dir, c.env, c.args)
			if err == nil && c.check != nil {
				if err = c.check(out); err != nil {
					err = fmt.Errorf("kubectl %s printed a wrong table: %w", strings.Join(c.args, " "), err)
				}
			}
			switch {
			case ctx.Err() != nil:
				return nil, fmt.Errorf("measuring kubectl: %w", ctx.Err())
			case err != nil:
				if k.Failed == 0 {
					k.FirstError = err.Error()
				}
				k.Failed++
			case round >= kubectlWarmups:
				c.runs = append(c.runs, took)
			}
			if err == nil && c == cmds[0] && k.Version == "" {
				k.Version = parseKubectlVersion(out)
			}
		}
	}
	k.Client, k.Get, k.GetTLS = newTiming(cmds[0].runs), newTiming(cmds[1].runs), newTiming(cmds[2].runs)
	return k, nil
}

// kubectlGetArgs lists the seeded objects as a table, with kubectl's discovery cache in cacheDir
// rather than the user's home, and then extra.
func kubectlGetArgs(cacheDir string, extra ...string) []string {
	return append([]string{"get", "configmaps", "-n", listNamespace, "--cache-dir", cacheDir}, extra...)
}

// kubectlEnv is the children's environment (childEnv) with KUBECONFIG naming kubeconfig alone, so
// that no user's kubeconfig changes what is measured.
func kubectlEnv(env []string, kubeconfig string) []string {
	env = slices.DeleteFunc(childEnv(env), func(kv string) bool { return strings.HasPrefix(kv, "KUBECONFIG=") })
	return append(env, "KUBECONFIG="+kubeconfig)
}

// runKubectl runs binary with args in dir and env and returns its standard output and how long it
// ran, from just before it started until it exited.
func runKubectl(ctx context.Context, binary, dir string, env, args []string) ([]byte, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, kubectlRunTimeout)
	defer cancel()
	var stdout bytes.Buffer
	stderr := newTailBuffer(4 << 10)
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	cmd.SysProcAttr = sysProcAttr()
	cmd.WaitDelay = outputWaitDelay
	began := time.Now()
	err := cmd.Run()
	took := time.Since(began)
	if err != nil {
		return nil, 0, fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), took, nil
}

// parseKubectlVersion returns the client version from `kubectl version --client`'s output
// ("Client Version: v1.32.4"), or its first line when it has none.
func parseKubectlVersion(out []byte) string {
	first, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	if v, ok := strings.CutPrefix(first, "Client Version:"); ok {
		return strings.TrimSpace(v)
	}
	return first
}

// checkKubectlTable checks that out is kubectl's table of exactly the objects named: a NAME header,
// then one row per object, each named once.
func checkKubectlTable(out []byte, names []string) error {
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if header := strings.Fields(lines[0]); len(header) == 0 || header[0] != "NAME" {
		return fmt.Errorf("no NAME header but %.200q", lines[0])
	}
	rows := lines[1:]
	if len(rows) != len(names) {
		return fmt.Errorf("%d rows, want one per each of the %d seeded objects", len(rows), len(names))
	}
	want := make(map[string]bool, len(names))
	for _, n := range names {
		want[n] = true
	}
	seen := make(map[string]bool, len(rows))
	for i, row := range rows {
		fields := strings.Fields(row)
		switch {
		case len(fields) == 0:
			return fmt.Errorf("row %d is empty", i+1)
		case !want[fields[0]]:
			return fmt.Errorf("row %d names %q, no seeded object", i+1, fields[0])
		case seen[fields[0]]:
			return fmt.Errorf("row %d names %q a second time", i+1, fields[0])
		}
		seen[fields[0]] = true
	}
	return nil
}
