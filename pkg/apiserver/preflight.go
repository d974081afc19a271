package apiserver

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"

	"github.com/apictl/apictl/pkg/flags"
	"github.com/apictl/apictl/pkg/serve"
	"github.com/apictl/apictl/pkg/storage/embedded"
)

// preflight checks, before anything is changed, what the start will need: the serving ports, which
// it binds and keeps in o so that nothing takes them before the server serves, the embedded etcd's
// client and peer ports, and the data and cert dirs. A join that failed on a busy port after the
// cluster had added the member left a learner that never started and a half-made data dir; checked
// first, the start fails with one line naming what is wrong and the cluster and the data dir are as
// they were.
func preflight(o *flags.ServerOptions) (_ boundPorts, err error) {
	var bound boundPorts
	defer func() {
		if err != nil {
			bound.close()
		}
	}()
	bind := func(ln *net.Listener, host string, port int, flag string) error {
		if *ln != nil || port == 0 {
			return nil
		}
		l, err := serve.Listen(net.JoinHostPort(host, strconv.Itoa(port)), flag)
		if err != nil {
			return err
		}
		*ln, bound = l, append(bound, ln)
		return nil
	}
	if err := bind(&o.SecureServing.Listener, o.SecureServing.BindAddress, o.SecureServing.BindPort, "--secure-port"); err != nil {
		return nil, err
	}
	if err := bind(&o.InsecureServing.Listener, o.InsecureServing.BindAddress, o.InsecureServing.BindPort, "--insecure-port"); err != nil {
		return nil, err
	}
	if len(o.Etcd.Servers) > 0 {
		return bound, checkDirs(o)
	}
	c := o.Etcd.Cluster
	if c.ClientPort != 0 {
		if err := serve.CheckPort(net.JoinHostPort("127.0.0.1", strconv.Itoa(c.ClientPort)), "--etcd-client-port", "or 0 to let the OS pick one"); err != nil {
			return nil, err
		}
	}
	if inCluster(o) {
		if err := serve.CheckPort(net.JoinHostPort(peerHost(o.Generic.AdvertiseAddress), strconv.Itoa(c.PeerPort)), "--etcd-peer-port", ""); err != nil {
			return nil, err
		}
	}
	if err := checkDirs(o); err != nil {
		return nil, err
	}
	return bound, checkEtcdDir(o)
}

// boundPorts are the listeners preflight bound, held in the options until the server's config takes
// them.
type boundPorts []*net.Listener

// close closes them, for a start that failed before the config took them.
func (b boundPorts) close() {
	for _, ln := range b {
		if *ln != nil {
			(*ln).Close()
		}
		*ln = nil
	}
}

// handOver leaves the listeners to the config that took them: the options hold none again, as
// before preflight.
func (b boundPorts) handOver() {
	for _, ln := range b {
		*ln = nil
	}
}

// inCluster reports whether the embedded etcd is a member of a cluster of apictl servers, with a
// peer listener: --cluster-init, --join, --cluster-reset, or data of such a member.
func inCluster(o *flags.ServerOptions) bool {
	c := o.Etcd.Cluster
	return len(o.Etcd.Servers) == 0 &&
		(c.ClusterInit || c.Join != "" || c.ClusterReset || embedded.IsClusterMember(filepath.Join(o.Generic.DataDir, "etcd")))
}

// checkDirs checks that the data dir and the cert dir can be made and written.
func checkDirs(o *flags.ServerOptions) error {
	if o.Generic.DataDir != "" {
		if err := embedded.CheckDir(o.Generic.DataDir, "--data-dir"); err != nil {
			return err
		}
	}
	if o.SecureServing.CertDir != "" {
		return embedded.CheckDir(o.SecureServing.CertDir, "--cert-dir")
	}
	return nil
}

// checkEtcdDir refuses an etcd dir another apictl runs on, and, for a join, one that holds part of
// a member: etcd's member directory without its write-ahead log.
func checkEtcdDir(o *flags.ServerOptions) error {
	dir := filepath.Join(o.Generic.DataDir, "etcd")
	if embedded.Running(dir) {
		return fmt.Errorf("--data-dir %s: another apictl serve is running on it: stop it, or choose another --data-dir", o.Generic.DataDir)
	}
	if o.Etcd.Cluster.Join == "" || embedded.HasData(dir) {
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, "member")); err == nil {
		return fmt.Errorf("--data-dir %s: %s holds part of an etcd member (no write-ahead log): move it aside, then join again", o.Generic.DataDir, dir)
	}
	return nil
}
