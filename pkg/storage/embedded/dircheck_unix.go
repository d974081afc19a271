//go:build unix

package embedded

import "golang.org/x/sys/unix"

// writable reports whether this process may create files in the directory dir (a read-only
// filesystem says no even to root).
func writable(dir string) bool { return unix.Access(dir, unix.W_OK|unix.X_OK) == nil }
