package bench_test

import "syscall"

// runnerSysProcAttr makes the runner die with the test binary (killed at a test timeout, say), so
// that it cannot go on measuring, with its server and etcd, after nobody reads its report.
func runnerSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
