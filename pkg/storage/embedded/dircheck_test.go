package embedded

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckDir(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	readOnly := filepath.Join(root, "ro")
	if err := os.Mkdir(readOnly, 0o500); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, dir, want string
		asRootOK        bool // root may write anywhere on a writable filesystem
	}{
		{name: "existing", dir: root},
		{name: "to be made", dir: filepath.Join(root, "a", "b")},
		{name: "a file", dir: file, want: "--data-dir " + file + ": " + file + " is a file, not a directory"},
		{name: "under a file", dir: filepath.Join(file, "x"), want: "is a file, not a directory"},
		{name: "read-only parent", dir: filepath.Join(readOnly, "x"), want: "cannot write in " + readOnly, asRootOK: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := tt.want
			if tt.asRootOK && os.Getuid() == 0 {
				want = ""
			}
			err := CheckDir(tt.dir, "--data-dir")
			if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
				t.Errorf("CheckDir(%s) = %v, want %q", tt.dir, err, want)
			}
			if _, serr := os.Stat(filepath.Join(root, "a")); serr == nil {
				t.Errorf("CheckDir made %s", filepath.Join(root, "a"))
			}
		})
	}
}
