package app

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files and generated completions with the current output")

// testdataDir is absolute because tests that write files change into a temporary directory.
var testdataDir, _ = filepath.Abs("testdata")

// run executes apictl in-process and returns its exit code, stdout and stderr.
func run(t *testing.T, terminal bool, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(context.Background(), args, Streams{In: &bytes.Buffer{}, Out: &out, ErrOut: &errOut, OutIsTerminal: terminal})
	return code, out.String(), errOut.String()
}

// golden compares got with testdata/<name>, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join(testdataDir, name)
	if *update {
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
		t.Fatalf("reading golden file (create it with go test ./cmd/apictl/app -update): %v", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (if the change is intended, run go test ./cmd/apictl/app -update)\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

// chdirTemp runs the test in an empty directory, so that the relative default data dir and any
// files a command writes land there.
func chdirTemp(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Chdir(dir)
	return dir
}
