package flags

import (
	"strconv"

	"github.com/spf13/pflag"

	"github.com/apictl/apictl/pkg/join"
)

// EmbeddedClusterOptions make the embedded etcds of several apictl servers one etcd cluster, as k3s
// servers form theirs: --cluster-init on the first, --join and --join-token on the others.
type EmbeddedClusterOptions struct {
	// ClusterInit makes this server the first member of a cluster others join.
	ClusterInit bool
	// Join is the secure URL of a member to ask for membership; JoinToken authorizes it.
	Join      string
	JoinToken string
	// PeerPort is the port the member listens on for its peers (mutual TLS) at the advertise address.
	PeerPort int
	// ClientPort is the loopback port of the member's private client listener (0: the OS picks).
	ClientPort int
	// ClusterReset makes the member the only one of a new cluster, keeping its data, and exits.
	ClusterReset bool
}

// DefaultEtcdPeerPort is etcd's own.
const DefaultEtcdPeerPort = 2380

func (o *EtcdOptions) addClusterFlags(fs *pflag.FlagSet) {
	c := &o.Cluster
	fs.BoolVar(&c.ClusterInit, "cluster-init", c.ClusterInit,
		"Make the embedded etcd the first member of a cluster that other apictl servers join with --join; writes the join token to <data-dir>/join-token.")
	fs.StringVar(&c.Join, "join", c.Join,
		"The secure URL (https://HOST:PORT) of a server whose embedded etcd cluster this one joins, as a learner promoted once caught up. Ignored once this server's data dir holds its member's data.")
	fs.StringVar(&c.JoinToken, "join-token", c.JoinToken, "The cluster's join token, from <data-dir>/join-token of a member; needed with --join.")
	_ = fs.SetAnnotation("join-token", secretAnnotation, []string{"true"})
	fs.IntVar(&c.PeerPort, "etcd-peer-port", c.PeerPort,
		"The port the embedded etcd listens on for its cluster peers (mutual TLS), at the advertise address. Used with --cluster-init, --join, or once the server is a cluster member.")
	fs.IntVar(&c.ClientPort, "etcd-client-port", c.ClientPort,
		"The loopback port of the embedded etcd's private client listener; 0 lets the OS pick a free one.")
	fs.BoolVar(&c.ClusterReset, "cluster-reset", c.ClusterReset,
		"Make this server's embedded etcd the only member of a new cluster, keeping its data (after the cluster lost its quorum for good), then exit; start again without the flag. Other members rejoin with --join after moving their <data-dir>/etcd aside.")
}

// validateCluster adds the problems of the cluster settings to errs.
func (o *EtcdOptions) validateCluster(errs *problemList) {
	const s = SectionEtcd
	c := o.Cluster
	if len(o.Servers) > 0 {
		for _, f := range []struct {
			flag string
			set  bool
		}{{"cluster-init", c.ClusterInit}, {"join", c.Join != ""}, {"cluster-reset", c.ClusterReset}} {
			if f.set {
				errs.add(problemf(s, f.flag, "", "applies to the embedded etcd only: leave out --etcd-servers, or manage the external cluster's membership with etcdctl"))
			}
		}
	}
	if c.ClusterInit && c.Join != "" {
		errs.add(problemf(s, "join", c.Join, "cannot be given with --cluster-init: the first server inits the cluster, the others join it"))
	}
	if c.ClusterReset && c.Join != "" {
		errs.add(problemf(s, "cluster-reset", "", "cannot be given with --join: reset the member that keeps the data, then join the others to it"))
	}
	if c.Join != "" {
		if _, err := join.CheckURL(c.Join); err != nil {
			errs.add(problemf(s, "join", c.Join, "must be https://HOST:PORT, the secure port of a member, like https://10.0.0.1:6443"))
		}
		if c.JoinToken == "" {
			errs.add(problemf(s, "join-token", "", "is needed with --join: copy it from <data-dir>/join-token of a member"))
		}
	}
	if c.JoinToken != "" {
		if _, err := join.ParseToken(c.JoinToken); err != nil {
			errs.add(problemf(s, "join-token", "<redacted>", "%v", err))
		}
		if c.Join == "" {
			errs.add(problemf(s, "join-token", "<redacted>", "is only used with --join"))
		}
	}
	if c.PeerPort < 1 || c.PeerPort > 65535 {
		errs.add(problemf(s, "etcd-peer-port", strconv.Itoa(c.PeerPort), "must be between 1 and 65535, inclusive"))
	}
	errs.add(checkPort(s, "etcd-client-port", c.ClientPort, "the fixed port, and the OS picks one"))
	if c.ClientPort != 0 && c.ClientPort == c.PeerPort {
		errs.add(problemf(s, "etcd-client-port", strconv.Itoa(c.ClientPort), "must differ from --etcd-peer-port"))
	}
}
