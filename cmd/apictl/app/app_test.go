package app

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
)

// testdataDir is absolute because tests that write files change into a temporary directory.
var testdataDir, _ = filepath.Abs("testdata")

// run executes apictl in-process and returns its exit code, stdout and stderr.
func run(t *testing.T, terminal bool, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(context.Background(), args, Streams{In: &bytes.Buffer{}, Out: &out, ErrOut: &errOut, OutIsTerminal: terminal})
	return code, out.String(), errOut.String()
}

// chdirTemp runs the test in an empty directory, so that the relative default data dir and any
// files a command writes land there.
func chdirTemp(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Chdir(dir)
	return dir
}
