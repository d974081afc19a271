package apiserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/apictl/apictl/pkg/certs"
	"github.com/apictl/apictl/pkg/flags"
	"github.com/apictl/apictl/pkg/join"
	"github.com/apictl/apictl/pkg/serve"
	"github.com/apictl/apictl/pkg/storage/embedded"
)

// embeddedCluster is this server's part in a cluster of embedded etcds (--cluster-init, --join, or a
// data dir whose member belongs to one); nil when its etcd runs alone.
type embeddedCluster struct {
	config    embedded.ClusterConfig
	certDir   string
	tokenFile string
	// servingCA reads the PEM of the CA the join token pins.
	servingCA func() ([]byte, error)
}

// joinTimeout bounds the wait for the member at --join to add this one: it may be starting too.
const joinTimeout = 2 * time.Minute

// prepareCluster runs before the PKI is made. With --join and no member data yet, it asks the member
// at --join to add this one as a learner and writes the cluster's shared CAs and keys into the cert
// dir, so that the PKI built next is the cluster's; then it makes the member's peer certificate.
func prepareCluster(ctx context.Context, o *flags.ServerOptions, logOut io.Writer) (*embeddedCluster, error) {
	c := o.Etcd.Cluster
	etcdDir := filepath.Join(o.Generic.DataDir, "etcd")
	if !inCluster(o) {
		return nil, nil
	}
	log := o.Logs.NewLogger(logOut).With("component", "etcd-cluster")
	host := peerHost(o.Generic.AdvertiseAddress)
	ec := &embeddedCluster{certDir: o.SecureServing.CertDir, tokenFile: join.TokenFile(o.Generic.DataDir),
		servingCA: func() ([]byte, error) { return servingCA(o) }}
	ec.config.PeerURL = "https://" + net.JoinHostPort(host, strconv.Itoa(c.PeerPort))
	ec.config.ForceNew = c.ClusterReset
	joining := c.Join != "" && !embedded.HasData(etcdDir)
	if joining {
		// The etcd recorded the name when it starts: a refused join leaves the data dir as it was.
		ec.config.Name = embedded.RecordedMemberName(etcdDir, newMemberName())
	} else {
		if err := os.MkdirAll(etcdDir, 0o700); err != nil {
			return nil, fmt.Errorf("creating %s: %w", etcdDir, err)
		}
		name, err := embedded.MemberName(etcdDir, newMemberName())
		if err != nil {
			return nil, err
		}
		ec.config.Name = name
	}
	if joining {
		name := ec.config.Name
		token, err := join.ParseToken(c.JoinToken)
		if err != nil {
			return nil, fmt.Errorf("--join-token: %w", err)
		}
		log.Info("asking to join the embedded etcd cluster", "member", c.Join, "name", name, "peerURL", ec.config.PeerURL)
		jctx, cancel := context.WithTimeout(ctx, joinTimeout)
		resp, err := join.Join(jctx, c.Join, token, join.Request{Name: name, PeerURL: ec.config.PeerURL}, log)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("joining the cluster of %s: %w", c.Join, err)
		}
		moved, err := join.WriteShared(ec.certDir, resp.Files, time.Now())
		if err != nil {
			return nil, fmt.Errorf("taking the cluster's CAs: %w", err)
		}
		if moved != "" {
			log.Warn("the cert dir held other CAs: moved aside, the cluster's are used", "movedTo", moved)
		}
		if err := join.WriteToken(ec.tokenFile, token); err != nil {
			return nil, fmt.Errorf("recording the join token: %w", err)
		}
		ec.config.InitialCluster = resp.InitialCluster
	}
	peer, err := certs.EnsureEtcdPeer(ctx, ec.certDir, []string{host})
	if err != nil {
		return nil, fmt.Errorf("the embedded etcd's peer certificate in %s: %w", ec.certDir, err)
	}
	ec.config.Peer = embedded.Credentials{CAFile: peer.CAFile, CertFile: peer.CertFile, KeyFile: peer.KeyFile}
	return ec, nil
}

// peerHost is the address the member's peers dial: the advertise address, else the address of the
// host's default interface (as kube-apiserver advertises), else loopback.
func peerHost(advertise string) string {
	if advertise != "" {
		return advertise
	}
	if ip, err := utilnet.ChooseHostInterface(); err == nil {
		return ip.String()
	}
	return "127.0.0.1"
}

// newMemberName is the host's name with a random suffix: a machine whose data dir was wiped rejoins
// as a new member.
func newMemberName() string {
	host, err := os.Hostname()
	if err != nil || host == "" || strings.ContainsAny(host, "=, ") {
		host = "apictl"
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return host + "-" + hex.EncodeToString(b)
}

// servingCA is the CA a join token pins: the self-signed PKI's, or with --tls-cert-file the last
// certificate of that file's chain (the served leaf itself when the file holds only the leaf).
func servingCA(o *flags.ServerOptions) ([]byte, error) {
	if o.SecureServing.CertFile == "" {
		return os.ReadFile(certs.CertPath(o.SecureServing.CertDir, certs.NameCA))
	}
	data, err := os.ReadFile(o.SecureServing.CertFile)
	if err != nil {
		return nil, err
	}
	var last *pem.Block
	for rest := data; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		if b.Type == "CERTIFICATE" {
			last = b
		}
	}
	if last == nil {
		return nil, fmt.Errorf("no certificate in %s", o.SecureServing.CertFile)
	}
	return pem.EncodeToMemory(last), nil
}

// token returns the member's join token, pinning the current serving CA; a member without one (a
// cluster's first start) gets a new one.
func (ec *embeddedCluster) token() (join.Token, error) {
	ca, err := ec.servingCA()
	if err != nil {
		return join.Token{}, fmt.Errorf("reading the serving CA: %w", err)
	}
	hash, err := join.CAHash(ca)
	if err != nil {
		return join.Token{}, err
	}
	t, ok, err := join.ReadToken(ec.tokenFile)
	if err != nil {
		return join.Token{}, err
	}
	if ok && t.CAHash == hash {
		return t, nil
	}
	if !ok {
		if t, err = join.NewToken(ca); err != nil {
			return join.Token{}, err
		}
	}
	// A renewed or replaced serving CA changes the pin, not the secret.
	t.CAHash = hash
	return t, join.WriteToken(ec.tokenFile, t)
}

// serveJoins has the secure port answer joins once the member runs.
func (ec *embeddedCluster) serveJoins(cfg *serve.Config, srv *embedded.Server) error {
	if ec == nil || cfg.SecureServing == nil {
		return nil
	}
	if _, err := ec.token(); err != nil {
		return fmt.Errorf("writing the join token to %s: %w", ec.tokenFile, err)
	}
	cfg.Logger.Info("embedded etcd cluster member: other servers join with --join https://"+cfg.ExternalAddress+" --join-token \"$(cat "+ec.tokenFile+")\"",
		"peerURL", ec.config.PeerURL, "members", len(srv.Members()))
	cfg.Join = &join.Handler{
		Token:   ec.token,
		CA:      ec.servingCA,
		Files:   func() (map[string][]byte, error) { return join.ReadShared(ec.certDir) },
		Members: learners{srv},
		Logger:  cfg.Logger.With("component", "etcd-cluster"),
	}
	cfg.JoinPrefix = join.PathPrefix
	return nil
}

// learners adds joiners to the embedded etcd's cluster.
type learners struct{ srv *embedded.Server }

func (l learners) AddLearner(ctx context.Context, name, peerURL string) (string, error) {
	initial, err := l.srv.AddLearner(ctx, name, peerURL)
	if errors.Is(err, embedded.ErrJoinBusy) {
		return "", join.ErrBusy
	}
	return initial, err
}

// ResetCluster makes the embedded etcd in --data-dir the only member of a new cluster, keeping its
// data, and stops it again (--cluster-reset): the next start serves as that single member.
func ResetCluster(ctx context.Context, o *flags.ServerOptions, logOut io.Writer) error {
	ec, err := prepareCluster(ctx, o, logOut)
	if err != nil {
		return err
	}
	dir := filepath.Join(o.Generic.DataDir, "etcd")
	if !embedded.HasData(dir) {
		return fmt.Errorf("--cluster-reset: %s holds no etcd data to keep", dir)
	}
	log := o.Logs.NewLogger(logOut)
	srv, err := embedded.Start(ctx, embedded.Config{Dir: dir, Private: true, Logger: log.With("component", "etcd"), Cluster: &ec.config,
		QuotaBackendBytes: o.Etcd.QuotaBackendBytes})
	if err != nil {
		return fmt.Errorf("resetting the embedded etcd cluster in %s: %w", dir, err)
	}
	members := len(srv.Members())
	if err := srv.Close(ctx); err != nil {
		return err
	}
	log.Info("the embedded etcd is now the only member of its cluster, with its data: start apictl serve again without --cluster-reset; other servers join it with --join after moving their <data-dir>/etcd aside",
		"dir", dir, "members", members, "peerURL", ec.config.PeerURL)
	return nil
}
