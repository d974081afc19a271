package clients

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/apictl/apictl/internal/servertest"
	"github.com/apictl/apictl/internal/testtool"
)

// jsDir holds the JavaScript client test: package.json pins @kubernetes/client-node, package-lock.json
// locks its dependencies, suite.mjs is the script and gadgets.yaml the custom resource it uses.
// `npm ci` in jsDir installs node_modules.
const jsDir = "testdata/js"

// jsTimeout bounds the script; it gives itself less and exits 1 when it overruns.
const jsTimeout = 3 * time.Minute

// TestJavaScript runs the official JavaScript client, @kubernetes/client-node, against the server as
// its users do: the README's create-a-namespace snippet, CRUD of the served kinds, custom objects,
// the three patch types, watches, informers, server-side apply, paging and errors. The assertions are
// in testdata/js/suite.mjs.
func TestJavaScript(t *testing.T) {
	node := testtool.Tool(t, "node")
	jsRequireInstalled(t)

	s := servertest.Start(t, "--api-config", filepath.Join(jsDir, "gadgets.yaml"))

	ctx, cancel := context.WithTimeout(context.Background(), jsTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "suite.mjs", s.AdminKubeconfig)
	cmd.Dir = jsDir
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node suite.mjs: %v after %s\n%s\nserver logs:\n%s", err, time.Since(start).Round(time.Millisecond), out, s.Logs)
	}
	t.Logf("node suite.mjs (%s):\n%s", time.Since(start).Round(time.Millisecond), out)
}

// jsRequireInstalled skips the test, or fails it in CI, unless `npm ci` installed the pinned version of
// @kubernetes/client-node in jsDir.
func jsRequireInstalled(t *testing.T) {
	t.Helper()
	version := func(path string, dependency bool) string {
		data, err := os.ReadFile(path)
		if err != nil {
			return ""
		}
		var pkg struct {
			Version      string            `json:"version"`
			Dependencies map[string]string `json:"dependencies"`
		}
		if err := json.Unmarshal(data, &pkg); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if dependency {
			return pkg.Dependencies["@kubernetes/client-node"]
		}
		return pkg.Version
	}
	want := version(filepath.Join(jsDir, "package.json"), true)
	if want == "" {
		t.Fatalf("%s does not name @kubernetes/client-node", filepath.Join(jsDir, "package.json"))
	}
	installed := version(filepath.Join(jsDir, "node_modules", "@kubernetes", "client-node", "package.json"), false)
	if installed != want {
		how := "is not installed"
		if installed != "" {
			how = "is at " + installed
		}
		testtool.Missing(t, "@kubernetes/client-node %s %s in %s: run `npm ci --no-audit --no-fund` there", want, how, jsDir)
	}
}
