package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/apictl/apictl/internal/testtool"
)

// readmeBlock returns the lines of the first ```sh block after the heading in README.md.
func readmeBlock(t *testing.T, readme, heading string) []string {
	t.Helper()
	_, rest, ok := strings.Cut(readme, "\n"+heading+"\n")
	if !ok {
		t.Fatalf("README.md has no heading %q", heading)
	}
	_, rest, ok = strings.Cut(rest, "```sh\n")
	if !ok {
		t.Fatalf("README.md has no sh block after %q", heading)
	}
	block, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatalf("README.md's sh block after %q does not end", heading)
	}
	return strings.Split(strings.TrimRight(block, "\n"), "\n")
}

// expectedNo is a tour line whose comment says kubectl answers no: `# no`, `# still no`.
var expectedNo = regexp.MustCompile(`#\s*(still\s+)?no$`)

// TestReadmeTour runs the README's "Talk to it" and "A tour" blocks, line by line as a user would,
// in a directory holding a copy of examples/ and a running `apictl serve`: every line must succeed,
// except those whose comment says the answer is no, which must answer no. So the README's tour and
// its examples/ cannot drift from what the server does.
func TestReadmeTour(t *testing.T) {
	kubectlPath := testtool.Tool(t, "kubectl")
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	lines := append(readmeBlock(t, readme, "## Talk to it"), readmeBlock(t, readme, "## A tour")...)

	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "examples"), os.DirFS(filepath.Join("..", "..", "examples"))); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"apictl": binary, "kubectl": kubectlPath} {
		if err := os.Symlink(target, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	ports := freePorts(t, 2)
	// The README's commands name no ports: the environment gives serve and `apictl certs client`
	// (for alice's kubeconfig) the test's.
	t.Setenv("APICTL_SECURE_PORT", fmt.Sprint(ports[0]))
	t.Setenv("APICTL_INSECURE_PORT", fmt.Sprint(ports[1]))
	// RBAC is the README's default (its upgrade notes); asked for explicitly so that the tour's
	// refusals are checked whatever the binary's default.
	p := startServeIn(t, dir, "--bind-address", "127.0.0.1") // RBAC, the default
	waitReady(t, ports[1])
	defer func() {
		if t.Failed() {
			t.Logf("server output:\n%s", p.output)
		}
	}()

	// One shell runs the lines in order, so that the tour's export holds for the lines after it;
	// markers around each line give its output and exit code.
	var script strings.Builder
	for i, line := range lines {
		fmt.Fprintf(&script, "echo '>>> %d'\n%s\necho \"<<< $?\"\n", i, line)
	}
	cmd := exec.Command("sh", "-c", script.String())
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"HOME="+dir, "KUBECONFIG=/nonexistent")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the tour's shell: %v\n%s", err, out)
	}
	results := regexp.MustCompile(`(?s)>>> (\d+)\n(.*?)<<< (\d+)\n`).FindAllStringSubmatch(string(out), -1)
	if len(results) != len(lines) {
		t.Fatalf("ran %d of the tour's %d lines:\n%s", len(results), len(lines), out)
	}
	for i, r := range results {
		line, output, code := lines[i], strings.TrimSpace(r[2]), r[3]
		if expectedNo.MatchString(line) {
			if code != "1" || !strings.HasSuffix(output, "no") {
				t.Errorf("%s\nwant no (exit 1), got exit %s:\n%s", line, code, output)
			}
			continue
		}
		if code != "0" {
			t.Errorf("%s\nexit %s:\n%s", line, code, output)
		}
	}

	// The tour's note: the CRD's CEL rule refuses a red widget larger than 5, with its message.
	big := filepath.Join(dir, "big.yaml")
	writeFile(t, big, "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: big, namespace: demo}\nspec: {size: 7, color: red}\n")
	kc := []string{"--kubeconfig", filepath.Join(dir, "apictl.local", "pki", "admin.kubeconfig")}
	if out, ok := kubectlResult(t, append(kc, "apply", "-f", big)...); ok || !strings.Contains(out, "a red widget is at most size 5") {
		t.Errorf("kubectl apply of a red widget of size 7: ok=%v, want the CRD rule's refusal:\n%s", ok, out)
	}
}
