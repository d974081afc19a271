package apiserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDataDirIdentity(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, identityFile)
	first, err := dataDirIdentity(path)
	if err != nil {
		t.Fatal(err)
	}
	again, err := dataDirIdentity(path)
	if err != nil || again != first {
		t.Fatalf("the second read gives %q (%v), the first %q", again, err, first)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the data dir holds %d files, want only %s", len(entries), identityFile)
	}
	if err := os.WriteFile(path, []byte("not-a-uuid\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = dataDirIdentity(path)
	if err == nil || !strings.Contains(err.Error(), "delete the file") {
		t.Errorf("a damaged identity file gives %v, want an error that says how to mend it", err)
	}
	if _, err := dataDirIdentity(filepath.Join(dir, "missing", identityFile)); err == nil {
		t.Error("an identity in a directory that does not exist gives no error")
	}
}
