package embedded

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// CheckDir reports, in one line naming flag, why dir could not be made or written by this process,
// without making or writing anything: the nearest part of dir that exists must be a directory this
// user may create files in.
func CheckDir(dir, flag string) error {
	for p := filepath.Clean(dir); ; {
		st, err := os.Stat(p)
		switch {
		case err == nil && !st.IsDir():
			return fmt.Errorf("%s %s: %s is a file, not a directory: choose another %s, or move the file away", flag, dir, p, flag)
		case err == nil && !writable(p):
			return fmt.Errorf("%s %s: this user (uid %d) cannot write in %s: fix its permissions, or choose another %s", flag, dir, os.Getuid(), p, flag)
		case err == nil:
			return nil
		case !errors.Is(err, os.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
			return fmt.Errorf("%s %s: %w", flag, dir, err)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return nil
		}
		p = parent
	}
}
