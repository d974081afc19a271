package patch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/apictl/apictl/internal/testtool"
)

// TestKubectlScripts runs the real kubectl against objectServer. A script under testdata/kubectl
// holds "# " comments, files ("-- name --" then their lines) and commands ("$ kubectl ...", with
// single quotes grouping words); after each command comes what it printed, the writes the server
// received ("> "), and "[exit N]" when it failed. -update rewrites those outputs.
func TestKubectlScripts(t *testing.T) {
	kubectl := testtool.Tool(t, "kubectl")
	files, err := filepath.Glob(filepath.Join("testdata", "kubectl", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no scripts under testdata/kubectl")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			got := runScript(t, kubectl, string(data))
			if *update {
				if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if got != string(data) {
				t.Errorf("%s: kubectl's output differs (if the change is intended, run go test ./pkg/patch -update)\ngot:\n%s\nwant:\n%s", file, got, data)
			}
		})
	}
}

// runScript runs a script and returns it with every command's output filled in.
func runScript(t *testing.T, kubectl, script string) string {
	srv := newObjectServer(t)
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	cfg := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters: [{name: test, cluster: {server: %q}}]\n"+
		"users: [{name: test, user: {}}]\ncontexts: [{name: test, context: {cluster: test, user: test, namespace: default}}]\n"+
		"current-context: test\n", srv.URL)
	if err := os.WriteFile(kubeconfig, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	lines := strings.Split(strings.TrimSuffix(script, "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		switch {
		case strings.HasPrefix(line, "-- ") && strings.HasSuffix(line, " --"):
			name := strings.TrimSuffix(strings.TrimPrefix(line, "-- "), " --")
			out.WriteString(line + "\n")
			var content strings.Builder
			for i+1 < len(lines) && !isScriptDirective(lines[i+1]) {
				i++
				content.WriteString(lines[i] + "\n")
			}
			out.WriteString(content.String())
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content.String()), 0o600); err != nil {
				t.Fatal(err)
			}
		case strings.HasPrefix(line, "$ kubectl "):
			out.WriteString(line + "\n")
			out.WriteString(runKubectl(t, kubectl, dir, kubeconfig, splitWords(t, strings.TrimPrefix(line, "$ kubectl "))))
			for _, w := range srv.takeWrites() {
				out.WriteString("> " + w + "\n")
			}
			// Skip the output recorded last time.
			for i+1 < len(lines) && !isScriptDirective(lines[i+1]) {
				i++
			}
		case strings.HasPrefix(line, "#") || line == "":
			out.WriteString(line + "\n")
		default:
			t.Fatalf("line %d: %q is neither a comment, a file nor a command", i+1, line)
		}
	}
	return out.String()
}

func isScriptDirective(line string) bool {
	return strings.HasPrefix(line, "$ ") || strings.HasPrefix(line, "# ") || (strings.HasPrefix(line, "-- ") && strings.HasSuffix(line, " --"))
}

// managedTime matches the times kubectl prints for managedFields entries, which are the time of
// the write.
var managedTime = regexp.MustCompile(`time: "?\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"?`)

// runKubectl runs one command in dir and returns its combined output, normalized.
func runKubectl(t *testing.T, kubectl, dir, kubeconfig string, args []string) string {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, kubectl, append([]string{"--kubeconfig", kubeconfig, "--cache-dir", filepath.Join(dir, "cache")}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir, "KUBECONFIG="+kubeconfig, "NO_COLOR=1")
	raw, err := cmd.CombinedOutput()
	out := managedTime.ReplaceAllString(string(raw), "time: TIME")
	if out != "" && !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		out += fmt.Sprintf("[exit %d]\n", exit.ExitCode())
	case err != nil:
		t.Fatalf("kubectl %s: %v", strings.Join(args, " "), err)
	}
	return out
}

// splitWords splits a command line at spaces, keeping single-quoted text together.
func splitWords(t *testing.T, line string) []string {
	var words []string
	var word strings.Builder
	inWord, quoted := false, false
	for _, r := range line {
		switch {
		case r == '\'':
			quoted, inWord = !quoted, true
		case r == ' ' && !quoted:
			if inWord {
				words = append(words, word.String())
				word.Reset()
				inWord = false
			}
		default:
			word.WriteRune(r)
			inWord = true
		}
	}
	if quoted {
		t.Fatalf("unbalanced quote in %q", line)
	}
	if inWord {
		words = append(words, word.String())
	}
	return words
}
