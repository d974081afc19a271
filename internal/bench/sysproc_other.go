//go:build !linux

package bench

import "syscall"

// sysProcAttr is the default elsewhere: only Linux can tie a child's life to its parent's.
func sysProcAttr() *syscall.SysProcAttr { return nil }
