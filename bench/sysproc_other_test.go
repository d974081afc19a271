//go:build !linux

package bench_test

import "syscall"

// runnerSysProcAttr is the default elsewhere: only Linux can tie a child's life to its parent's.
func runnerSysProcAttr() *syscall.SysProcAttr { return nil }
