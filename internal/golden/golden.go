// Package golden compares a test's output with an expected file under testdata and, when the test
// runs with -update, rewrites the file instead.
//
// Importing the package registers the -update flag, so a test package that imports it must not
// define its own.
package golden

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Update, set by -update, makes Check rewrite golden files rather than compare with them. Tests
// that keep other generated files in step (such as shell completions) honour it too.
var Update = flag.Bool("update", false, "rewrite golden files with the current output")

// dir is the absolute testdata directory of the package under test. It is resolved when the test
// binary starts, in the package's directory, so that tests which change directory still find it.
var dir, _ = filepath.Abs("testdata")

// Check compares got with testdata/<name> (name uses slashes) or, with -update, writes got there.
func Check(t testing.TB, name, got string) {
	t.Helper()
	path := filepath.Join(dir, filepath.FromSlash(name))
	if *Update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (create it by rerunning the test with -update): %v", err)
	}
	if diff := firstDiff(got, string(want)); diff != "" {
		t.Errorf("output differs from %s (if the change is intended, rerun the test with -update and review the diff)\n%s", path, diff)
	}
}

// firstDiff describes the first line where got and want differ, or returns "" when they are equal.
// One line is enough to find the change; the whole file may be thousands of lines of JSON.
func firstDiff(got, want string) string {
	if got == want {
		return ""
	}
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; ; i++ {
		switch {
		case i >= len(g):
			return fmt.Sprintf("line %d: got end of output, want %q", i+1, w[i])
		case i >= len(w):
			return fmt.Sprintf("line %d: got %q, want end of file", i+1, g[i])
		case g[i] != w[i]:
			return fmt.Sprintf("line %d:\ngot:  %q\nwant: %q", i+1, g[i], w[i])
		}
	}
}
