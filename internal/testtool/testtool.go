// Package testtool lets tests shell out to external programs such as openssl, curl and kubectl:
// such a test skips where the program is missing, except in CI, where it fails so that CI cannot
// pass by not running it.
package testtool

import (
	"os"
	"os/exec"
	"testing"
)

// RequireToolsEnv, set to 1, turns a missing external tool from a skipped test into a failed one, so
// that CI cannot pass by not running the checks against openssl, curl and kubectl.
const RequireToolsEnv = "CI_REQUIRE_TOOLS"

// Tool returns the path of an external program the test shells out to. When it is not installed the
// test is skipped, or fails when CI_REQUIRE_TOOLS=1.
func Tool(t testing.TB, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	if os.Getenv(RequireToolsEnv) == "1" {
		t.Fatalf("%s is not installed, and %s=1 requires it: %v", name, RequireToolsEnv, err)
	}
	t.Skipf("%s is not installed (set %s=1 to fail instead): %v", name, RequireToolsEnv, err)
	return ""
}

// Run runs an external program and fails the test, showing its output, when it exits non-zero.
func Run(t testing.TB, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(Tool(t, name), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return string(out)
}

// Missing reports that something a test needs from outside the repository (a client library, an
// installed package) is not there, with how to install it: the test is skipped, or fails when
// CI_REQUIRE_TOOLS=1, so that CI cannot pass by not running it.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv(RequireToolsEnv) == "1" {
		t.Fatalf(format+" (%s=1 requires it)", append(args, RequireToolsEnv)...)
	}
	t.Skipf(format+" (set %s=1 to fail instead)", append(args, RequireToolsEnv)...)
}
