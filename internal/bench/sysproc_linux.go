package bench

import "syscall"

// sysProcAttr makes a child die with the harness, so that an interrupted run leaves no server or etcd
// behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
