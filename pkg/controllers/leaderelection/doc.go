// Package leaderelection runs a set of controllers on the one replica that holds a
// coordination.k8s.io/v1 Lease, with client-go's own leader election (so the Lease reads and behaves
// as kube-controller-manager's does), and keeps the replica alive when it loses the Lease.
//
// kube-controller-manager exits when it stops leading and lets its supervisor restart it. An API
// server must go on serving, so an Elector campaigns in a loop instead: winning starts the Group's
// controllers with a fresh context; losing (renewal failed within the renew deadline) cancels that
// context, waits for every controller to return, and campaigns again. On shutdown the controllers
// stop first and the Lease is released after (ReleaseOnCancel), so that another replica takes over at
// once and never overlaps with them. A replica that dies without releasing (SIGKILL, power loss)
// holds the Lease until it expires: the next holder waits the lease duration, as in kube.
package leaderelection
