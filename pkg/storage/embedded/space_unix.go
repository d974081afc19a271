//go:build unix

package embedded

import "golang.org/x/sys/unix"

// freeBytes is the space on dir's filesystem that an unprivileged process may still use.
func freeBytes(dir string) (uint64, bool) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return uint64(st.Bavail) * uint64(st.Bsize), true //nolint:unconvert // field types differ by OS
}
