package embedded

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	"go.etcd.io/etcd/client/pkg/v3/types"
	"go.etcd.io/etcd/server/v3/embed"
	"go.etcd.io/etcd/server/v3/etcdserver/api/membership"
	etcdserverrors "go.etcd.io/etcd/server/v3/etcdserver/errors"
)

// ClusterConfig makes the embedded etcd a member of a cluster of apictl servers: it listens for its
// peers with mutual TLS on PeerURL, and on its first start either founds a cluster of its own
// (InitialCluster empty) or joins the members InitialCluster names, as a learner another member
// has added (see AddLearner). A restart takes the membership from the data, whatever these say.
type ClusterConfig struct {
	// Name is the member's name on its first start; later starts keep the name recorded in the data
	// directory. A data directory that an earlier apictl ran alone keeps that member's name.
	Name string
	// PeerURL is https://IP:PORT: the peer listener's address and the URL the other members dial.
	PeerURL string
	// Peer is the member's peer pair, for both ends of peer connections, and the cluster's peer CA,
	// the only one that a peer's certificate may chain to.
	Peer Credentials
	// InitialCluster is "name=url,..." of every member, this one included, when joining; empty founds
	// a new cluster.
	InitialCluster string
	// ForceNew makes the member the only one of its cluster, keeping its data (etcd's
	// --force-new-cluster): for a cluster that lost its quorum for good.
	ForceNew bool
}

const (
	// memberNameFile, in the data directory, holds the member's name, which must not change.
	memberNameFile = "member-name"
	// A cluster's members talk over a network: etcd's defaults are 100 ms and 1 s. These halve them
	// so that a cluster that got its quorum back elects a leader within about a second, and stay well
	// above a LAN's round trip.
	clusterTickMs     = 50
	clusterElectionMs = 500
	// clusterCatchUpEntries is etcd's default: a follower that falls further behind than this gets
	// a whole snapshot.
	clusterCatchUpEntries = 5000
)

// MemberName is the name of the member whose data is in dir: the recorded one, else "apictl" for a
// data directory an earlier apictl ran alone in, else want, recorded for the next start.
func MemberName(dir, want string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, memberNameFile))
	if err == nil && strings.TrimSpace(string(b)) != "" {
		return strings.TrimSpace(string(b)), nil
	}
	if HasData(dir) {
		want = name
	}
	if err := writeFile(filepath.Join(dir, memberNameFile), []byte(want+"\n")); err != nil {
		return "", fmt.Errorf("recording the member's name: %w", err)
	}
	return want, nil
}

// RecordedMemberName is the name recorded in dir by MemberName, else want; nothing is written, so
// that a join the cluster refuses leaves no trace.
func RecordedMemberName(dir, want string) string {
	b, err := os.ReadFile(filepath.Join(dir, memberNameFile))
	if n := strings.TrimSpace(string(b)); err == nil && n != "" {
		return n
	}
	return want
}

// HasData reports whether dir holds an etcd member's data: a start there restarts that member.
func HasData(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "member", "wal"))
	return err == nil
}

// IsClusterMember reports whether dir holds the data of a member of a cluster of apictl servers,
// which restarts as one whatever the flags say.
func IsClusterMember(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, memberNameFile))
	return err == nil && HasData(dir)
}

// applyCluster turns ecfg, a single member's configuration, into a cluster member's.
func applyCluster(ecfg *embed.Config, dir string, c *ClusterConfig) error {
	peer, err := url.Parse(c.PeerURL)
	if err != nil || peer.Scheme != "https" || peer.Port() == "" {
		return fmt.Errorf("peer URL %q: want https://IP:PORT", c.PeerURL)
	}
	n, err := MemberName(dir, c.Name)
	if err != nil {
		return err
	}
	ecfg.Name = n
	ecfg.ListenPeerUrls = []url.URL{*peer}
	ecfg.AdvertisePeerUrls = []url.URL{*peer}
	ecfg.PeerTLSInfo = transport.TLSInfo{
		CertFile: c.Peer.CertFile, KeyFile: c.Peer.KeyFile, TrustedCAFile: c.Peer.CAFile,
		ClientCertAuth: true,
	}
	ecfg.InitialCluster = n + "=" + c.PeerURL
	if c.InitialCluster != "" {
		ecfg.InitialCluster = c.InitialCluster
		ecfg.ClusterState = embed.ClusterStateFlagExisting
	}
	ecfg.ForceNewCluster = c.ForceNew
	ecfg.TickMs = clusterTickMs
	ecfg.ElectionMs = clusterElectionMs
	ecfg.SnapshotCatchUpEntries = clusterCatchUpEntries
	return nil
}

// ErrRemoved says the member's cluster removed it: its data can never serve again.
var ErrRemoved = errors.New("the cluster removed this member")

// removedMessage is what etcd logs, and all it tells, when it stops because a peer answered that
// the cluster removed this member.
const removedMessage = "data-dir used by this member must be removed"

// removedOr is ErrRemoved, with what to do, when etcd stopped because its cluster removed the
// member; err otherwise.
func removedOr(removed bool, dir string, err error) error {
	if removed {
		return fmt.Errorf("%w (a --cluster-reset on another member, or a member remove): move %s aside and start again with --join to rejoin", ErrRemoved, dir)
	}
	return err
}

// PeerURL is the URL the member's peers reach it at; empty when it runs alone, without a peer
// listener.
func (s *Server) PeerURL() string {
	if s.cluster == nil {
		return ""
	}
	return s.cluster.PeerURL
}

// Member is one member of the embedded etcd's cluster.
type Member struct {
	ID       uint64
	Name     string
	PeerURLs []string
	Learner  bool
}

// Members lists the cluster's members as this member knows them.
func (s *Server) Members() []Member {
	var out []Member
	for _, m := range s.etcd.Server.Cluster().Members() {
		out = append(out, Member{ID: uint64(m.ID), Name: m.Name, PeerURLs: append([]string(nil), m.PeerURLs...), Learner: m.IsLearner})
	}
	return out
}

// ErrJoinBusy is returned by AddLearner while another member is still joining: etcd takes one
// learner at a time. The joiner retries.
var ErrJoinBusy = errors.New("another member is joining the cluster; retry in a moment")

// AddLearner adds a member called name at peerURL to the cluster as a learner, and returns the
// initial cluster it must start with. A member already listed at peerURL is one whose data was
// lost (or a join that did not finish): it is removed first, so that the machine can rejoin. A
// learner that never started is removed too, since etcd takes one learner at a time and the
// initial cluster must name every member.
func (s *Server) AddLearner(ctx context.Context, memberName, peerURL string) (initialCluster string, err error) {
	if s.cluster == nil {
		return "", errors.New("this etcd runs alone: start the server with --cluster-init to take members")
	}
	urls, err := types.NewURLs([]string{peerURL})
	if err != nil {
		return "", fmt.Errorf("peer URL %q: %w", peerURL, err)
	}
	self := s.etcd.Server.MemberID()
	for _, m := range s.etcd.Server.Cluster().Members() {
		stale := m.IsLearner && !m.IsStarted()
		for _, u := range m.PeerURLs {
			stale = stale || u == urls[0].String()
		}
		if !stale {
			continue
		}
		if m.ID == self {
			return "", fmt.Errorf("peer URL %s is this member's own", peerURL)
		}
		if _, err := s.etcd.Server.RemoveMember(ctx, uint64(m.ID)); err != nil && !errors.Is(err, membership.ErrIDNotFound) {
			return "", fmt.Errorf("removing the stale member %s (%s) before adding %s: %w", m.ID, m.Name, peerURL, err)
		}
	}
	// etcd derives a member's ID from its peer URLs, a salt and the time in seconds; a member added
	// again at the same URL within a second would get the ID just removed, which etcd refuses.
	salt := make([]byte, 8)
	_, _ = rand.Read(salt)
	now := time.Now()
	learner := membership.NewMemberAsLearner(memberName, urls, hex.EncodeToString(salt), &now)
	members, err := s.etcd.Server.AddMember(ctx, *learner)
	// etcd also refuses a member change for a few seconds after the last one (its strict reconfig
	// check answers "unhealthy cluster"): a moment of every join after the first, retried the same way.
	if errors.Is(err, membership.ErrTooManyLearners) || errors.Is(err, etcdserverrors.ErrUnhealthy) {
		return "", ErrJoinBusy
	}
	if err != nil {
		return "", fmt.Errorf("adding %s at %s as a learner: %w", memberName, peerURL, err)
	}
	var parts []string
	for _, m := range members {
		n := m.Name
		if m.ID == learner.ID {
			n = memberName
		}
		for _, u := range m.PeerURLs {
			parts = append(parts, n+"="+u)
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, ","), nil
}

// IsLearner reports whether the member is a learner, which does not vote and serves no
// linearizable request.
func (s *Server) IsLearner() bool { return s.etcd.Server.IsLearner() }

// Promote makes this member, when it is a learner, a voting member once it has caught up with the
// leader, retrying until then or until ctx ends. A learner serves no linearizable request, so the
// API server waits for this before it serves.
func (s *Server) Promote(ctx context.Context) error {
	id := uint64(s.etcd.Server.MemberID())
	promoted := false
	var err error
	for s.etcd.Server.IsLearner() {
		// The leader refuses until the learner has caught up; other failures (a leader election, a
		// forward to the leader that failed) pass too. Anything lasting ends with ctx. Once the
		// leader has promoted it, the member is a learner until it applies that change itself.
		wait := 10 * time.Millisecond
		if !promoted {
			_, err = s.etcd.Server.PromoteMember(ctx, id)
			promoted = err == nil || errors.Is(err, membership.ErrMemberNotLearner)
			if !promoted {
				wait = 100 * time.Millisecond
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("promoting this learner to a voting member: %w (last: %v)", context.Cause(ctx), err)
		case <-time.After(wait):
		}
	}
	return nil
}

// updatePeerURL records the configured peer URL in the membership when it changed: a data directory
// that an apictl ran alone advertises no reachable peer URL until it becomes a cluster's first
// member.
func (s *Server) updatePeerURL(ctx context.Context) error {
	if s.cluster == nil {
		return nil
	}
	self := s.etcd.Server.Cluster().Member(s.etcd.Server.MemberID())
	if self == nil || (len(self.PeerURLs) == 1 && self.PeerURLs[0] == s.cluster.PeerURL) {
		return nil
	}
	urls, err := types.NewURLs([]string{s.cluster.PeerURL})
	if err != nil {
		return err
	}
	updated := membership.Member{ID: self.ID, RaftAttributes: membership.RaftAttributes{PeerURLs: urls.StringSlice(), IsLearner: self.IsLearner}}
	if _, err := s.etcd.Server.UpdateMember(ctx, updated); err != nil {
		return fmt.Errorf("advertising the peer URL %s: %w", s.cluster.PeerURL, err)
	}
	return nil
}

// quorumWait is how long a write waits for its cluster to elect a leader before it is refused: an
// election after a member died takes one to two election timeouts.
const quorumWait = 3 * time.Second

// ErrNoQuorum says the member's cluster has no leader: fewer than a majority of its members run.
var ErrNoQuorum = errors.New("the embedded etcd cluster has no leader: fewer than a majority of its members are running")

// WaitLeader returns at once while the member knows a leader, and otherwise waits up to a few
// seconds (or until ctx ends) for one before it returns ErrNoQuorum. A member alone always has one.
func (s *Server) WaitLeader(ctx context.Context) error {
	if s.cluster == nil || s.etcd.Server.Leader() != 0 {
		return nil
	}
	deadline := time.NewTimer(quorumWait)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-deadline.C:
			return ErrNoQuorum
		case <-tick.C:
			if s.etcd.Server.Leader() != 0 {
				return nil
			}
		}
	}
}

// MemberID is this member's ID in the cluster.
func (s *Server) MemberID() uint64 { return uint64(s.etcd.Server.MemberID()) }
