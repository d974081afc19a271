// Command runconformance runs each test of a target list from the conformance binary (go test -c of
// this module) in a process of its own against one API server, so that a test which panics the e2e
// framework cannot take the others down, and writes OUTDIR/results.json and a log per test. It learns
// from ../shared/conformance/run.py and needs nothing but Go.
//
//	runconformance -binary conformance.test -kubeconfig K -list generic-controlplane.txt -out DIR
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
)

type result struct {
	Result  string  `json:"result"` // passed, failed, timeout, panicked, not-run
	Seconds float64 `json:"seconds"`
	Reason  string  `json:"reason,omitempty"`
}

func main() {
	binary := flag.String("binary", "", "the conformance test binary (go test -c -o BINARY . in test/conformance)")
	kubeconfig := flag.String("kubeconfig", "", "the kubeconfig of the server under test")
	list := flag.String("list", "generic-controlplane.txt", "the target list: one full test name a line")
	out := flag.String("out", "", "the folder for results.json and logs/")
	workers := flag.Int("workers", 2, "tests run at once")
	timeout := flag.Duration("timeout", 7*time.Minute, "the limit of one test")
	known := flag.String("known-failures", "", "a list of tests expected to fail for now (APIs not served yet): their failures are reported but do not fail the run")
	flag.Parse()
	var problems []string
	for name, v := range map[string]string{"-binary": *binary, "-kubeconfig": *kubeconfig, "-out": *out} {
		if v == "" {
			problems = append(problems, name+" is required")
		}
	}
	if len(problems) > 0 {
		fmt.Fprintln(os.Stderr, "error: "+strings.Join(problems, "; "))
		os.Exit(2)
	}
	names, err := readList(*list, false)
	if err != nil {
		fmt.Fprintf(os.Stderr, "error: reading the target list: %v\n", err)
		os.Exit(2)
	}
	if err := os.MkdirAll(filepath.Join(*out, "logs"), 0o755); err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(2)
	}
	results := run(names, *workers, func(name string) result { return runOne(*binary, *kubeconfig, *out, name, *timeout) })
	data, _ := json.MarshalIndent(results, "", " ")
	if err := os.WriteFile(filepath.Join(*out, "results.json"), data, 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "error: writing results: %v\n", err)
		os.Exit(2)
	}
	expected := map[string]bool{}
	if *known != "" {
		names, err := readList(*known, true)
		if err != nil {
			fmt.Fprintf(os.Stderr, "error: reading the known failures: %v\n", err)
			os.Exit(2)
		}
		for _, n := range names {
			expected[n] = true
		}
	}
	passed, unexpected := 0, 0
	for name, r := range results {
		switch {
		case r.Result == "passed":
			passed++
			if expected[name] {
				fmt.Printf("now passes, remove it from the known failures: %s\n", name)
			}
		case !expected[name]:
			unexpected++
			fmt.Printf("UNEXPECTED %s: %s  %s\n", r.Result, name, r.Reason)
		}
	}
	// The plain closing line CI readers look for.
	fmt.Printf("%d passed, %d failed\n", passed, len(results)-passed)
	if unexpected > 0 {
		fmt.Printf("%d tests failed that are not known failures\n", unexpected)
		os.Exit(1)
	}
}

// readList reads the test names of a list, one per line; # starts a comment. The target list must
// name a test (allowEmpty false); the known failures may be none.
func readList(path string, allowEmpty bool) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			names = append(names, line)
		}
	}
	if len(names) == 0 && !allowEmpty {
		return nil, errors.New("it names no test")
	}
	return names, nil
}

func run(names []string, workers int, one func(string) result) map[string]result {
	results := map[string]result{}
	var mu sync.Mutex
	work := make(chan string)
	var wg sync.WaitGroup
	for range max(workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for name := range work {
				r := one(name)
				mu.Lock()
				results[name] = r
				fmt.Printf("%-9s %6.1fs %s  %s\n", r.Result, r.Seconds, name, r.Reason)
				mu.Unlock()
			}
		}()
	}
	for _, n := range names {
		work <- n
	}
	close(work)
	wg.Wait()
	return results
}

var (
	logName = regexp.MustCompile(`[^A-Za-z0-9]+`)
	ran     = regexp.MustCompile(`Ran (\d+) of`)
	failed  = regexp.MustCompile(`(?m)^\s*\[FAILED\] (.+)$`)
)

func runOne(binary, kubeconfig, out, name string, timeout time.Duration) result {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), timeout+time.Minute)
	defer cancel()
	focus := strings.ReplaceAll(regexp.QuoteMeta(name), `\ `, " ")
	cmd := exec.CommandContext(ctx, binary, "--kubeconfig", kubeconfig, "--ginkgo.focus", focus,
		"--ginkgo.no-color", "--ginkgo.timeout", timeout.String())
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	logFile := logName.ReplaceAllString(name, "_")
	if len(logFile) > 150 {
		logFile = logFile[:150]
	}
	_ = os.WriteFile(filepath.Join(out, "logs", logFile+".log"), buf.Bytes(), 0o644)
	r := result{Seconds: time.Since(start).Round(100 * time.Millisecond).Seconds()}
	text := buf.String()
	m := ran.FindStringSubmatch(text)
	switch {
	case ctx.Err() != nil:
		r.Result = "timeout"
	case strings.Contains(text, "Your Test Panicked") || strings.Contains(text, "panic:") && m == nil:
		r.Result = "panicked"
	case m != nil && m[1] == "0":
		r.Result = "not-run"
	case err == nil:
		r.Result = "passed"
	default:
		r.Result = "failed"
	}
	for _, f := range failed.FindAllStringSubmatch(text, -1) {
		if msg := strings.TrimSpace(f[1]); !strings.HasPrefix(msg, "in [") && !regexp.MustCompile(`^\[\d`).MatchString(msg) {
			r.Reason = msg[:min(len(msg), 300)]
			break
		}
	}
	return r
}
