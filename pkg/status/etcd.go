package status

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// memberTimeout bounds each member's Status: a member that is down must not hold `apictl status`
// past its one second.
const memberTimeout = 700 * time.Millisecond

// Maintenance is the part of etcd's client the etcd section asks: the maintenance API's member
// list, status and alarms, which etcdctl's `endpoint status` and `alarm list` use too.
type Maintenance interface {
	MemberList(ctx context.Context, opts ...clientv3.OpOption) (*clientv3.MemberListResponse, error)
	Status(ctx context.Context, endpoint string) (*clientv3.StatusResponse, error)
	AlarmList(ctx context.Context) (*clientv3.AlarmResponse, error)
}

var _ Maintenance = (*clientv3.Client)(nil)

// EtcdSource says how to ask etcd about its members.
type EtcdSource struct {
	Client Maintenance
	// Endpoints are the URLs Client reaches etcd at (--etcd-servers, or the embedded member's). Each
	// is asked for its member's status, whatever URL that member advertises. When LocalOnly, the
	// member behind them is the only one whose Status can be asked: apictl's private embedded etcd
	// listens for clients on loopback, with a CA of its own.
	Endpoints []string
	LocalOnly bool
	Embedded  bool
	// PeerActive, for LocalOnly, says whether this member's raft transport has a live connection to
	// another (etcd's etcd_network_active_peers); known is false when it cannot say.
	PeerActive func(local, remote uint64) (active, known bool)
	// Reported, for LocalOnly, gives the status each member's own replica last reported (its
	// member Lease), by member ID, for the members this one cannot ask.
	Reported func(now time.Time) map[uint64]ReportedStatus
}

// ReportedStatus is a member's status as its replica reported it, and when.
type ReportedStatus struct {
	DBSize, DBInUse     int64
	RaftTerm, RaftIndex uint64
	At                  time.Time
}

// learnerClock remembers when each member was first seen as a learner: etcd does not record it.
type learnerClock struct {
	mu    sync.Mutex
	since map[uint64]time.Time
}

// seen returns when id was first seen as a learner, now if it is now.
func (c *learnerClock) seen(id uint64, now time.Time) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.since == nil {
		c.since = map[uint64]time.Time{}
	}
	t, ok := c.since[id]
	if !ok {
		c.since[id], t = now, now
	}
	return t
}

// forget drops the members that are no longer learners.
func (c *learnerClock) forget(keep map[uint64]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id := range c.since {
		if !keep[id] {
			delete(c.since, id)
		}
	}
}

// etcdFacts asks etcd for its members, each member's status and the alarms.
func etcdFacts(ctx context.Context, src EtcdSource, learners *learnerClock, now time.Time) *Etcd {
	out := &Etcd{Embedded: src.Embedded, Members: []Member{}}
	// The list is the local member's (serializable): it answers without a quorum, so that a cluster
	// without a leader still shows its members. Only the caller's deadline bounds it, since the
	// client's first request also makes its connection.
	list, err := src.Client.MemberList(ctx, clientv3.WithSerializable())
	if err != nil {
		out.Error = fmt.Sprintf("listing the members: %v", err)
		return out
	}
	ctx, cancel := context.WithTimeout(ctx, memberTimeout)
	defer cancel()
	var local uint64
	if list.Header != nil {
		local = list.Header.MemberId
	}
	var (
		alarms   *clientv3.AlarmResponse
		alarmErr error
		wg       sync.WaitGroup
	)
	wg.Go(func() { alarms, alarmErr = src.Client.AlarmList(ctx) })
	statuses, errs := memberStatuses(ctx, src, list.Members, local)
	wg.Wait()

	var leader, newest uint64
	for _, st := range statuses {
		if st != nil {
			leader = max(leader, st.Leader) // one leader per term; a member that knows none says 0
			newest = max(newest, st.RaftIndex)
			out.Quota = max(out.Quota, st.DbSizeQuota)
		}
	}
	var reported map[uint64]ReportedStatus
	if src.Reported != nil {
		reported = src.Reported(now)
	}
	learning := map[uint64]bool{}
	for i, m := range list.Members {
		mem := Member{ID: memberID(m.ID), Name: m.Name, Role: RoleFollower}
		if len(m.PeerURLs) > 0 {
			mem.PeerURL = m.PeerURLs[0]
		}
		switch {
		case m.IsLearner:
			mem.Role = RoleLearner
			learning[m.ID] = true
			mem.LearnerSince = learners.seen(m.ID, now)
		case m.ID == leader && leader != 0:
			mem.Role = RoleLeader
		}
		switch st := statuses[i]; {
		case errs[i] != nil:
			mem.Error = errs[i].Error()
		case st != nil:
			mem.DBSize, mem.DBInUse, mem.RaftTerm, mem.RaftIndex = st.DbSize, st.DbSizeInUse, st.RaftTerm, st.RaftIndex
			mem.Lag = newest - st.RaftIndex
		case src.PeerActive != nil:
			if active, known := src.PeerActive(local, m.ID); known && !active {
				mem.Error = "member " + m.Name + "'s peers have no connection to it"
			} else if r, ok := reported[m.ID]; ok {
				mem.DBSize, mem.DBInUse, mem.RaftTerm, mem.RaftIndex, mem.ReportedAt = r.DBSize, r.DBInUse, r.RaftTerm, r.RaftIndex, r.At.UTC()
			}
		}
		out.Members = append(out.Members, mem)
	}
	for i := range out.Members {
		// A reported index is up to a renewal old: it may trail the newest by that much.
		if m := &out.Members[i]; !m.ReportedAt.IsZero() && newest > m.RaftIndex {
			m.Lag = newest - m.RaftIndex
		}
	}
	learners.forget(learning)
	if leader != 0 {
		out.Leader = memberID(leader)
	}
	if alarmErr != nil {
		// The alarm list needs a quorum: without a leader, the members are still worth showing.
		out.AlarmsError = alarmErr.Error()
	} else {
		for _, a := range alarms.Alarms {
			out.Alarms = append(out.Alarms, Alarm{Member: memberID(a.MemberID), Type: a.Alarm.String()})
		}
	}
	slices.SortFunc(out.Members, func(a, b Member) int { return cmp.Or(strings.Compare(a.Name, b.Name), strings.Compare(a.ID, b.ID)) })
	return out
}

// memberID spells a member ID as etcdctl does: hex.
func memberID(id uint64) string { return strconv.FormatUint(id, 16) }

// memberStatuses asks, all at once, each endpoint the server uses and (unless LocalOnly) each
// member at the client URL it advertises, and gives each member the answer that names it. A member
// advertises what it was told to, which need not be how this server reaches it (a loopback address
// or port 0 behind a proxy); the endpoints the server uses answer for their members whatever they
// advertise. A member no route answered for gets the error of the URL that is known to be its own:
// the one it advertises, or, when LocalOnly, the server's endpoint (local is its ID).
func memberStatuses(ctx context.Context, src EtcdSource, members []*etcdserverpb.Member, local uint64) ([]*clientv3.StatusResponse, []error) {
	type answer struct {
		member int // the member the URL is known to reach, or -1
		st     *clientv3.StatusResponse
		err    error
	}
	var asks []answer
	var urls []string
	for _, ep := range src.Endpoints {
		member := slices.IndexFunc(members, func(m *etcdserverpb.Member) bool {
			return src.LocalOnly && m.ID == local || len(m.ClientURLs) > 0 && m.ClientURLs[0] == ep
		})
		asks, urls = append(asks, answer{member: member}), append(urls, ep)
	}
	for i, m := range members {
		// Port 0 is what a member advertises before it knows its port: nothing to dial.
		if !src.LocalOnly && len(m.ClientURLs) > 0 && !slices.Contains(src.Endpoints, m.ClientURLs[0]) && !strings.HasSuffix(m.ClientURLs[0], ":0") {
			asks, urls = append(asks, answer{member: i}), append(urls, m.ClientURLs[0])
		}
	}
	var wg sync.WaitGroup
	for i := range asks {
		wg.Go(func() { asks[i].st, asks[i].err = src.Client.Status(ctx, urls[i]) })
	}
	wg.Wait()
	statuses, errs := make([]*clientv3.StatusResponse, len(members)), make([]error, len(members))
	for _, a := range asks {
		if a.err != nil || a.st == nil || a.st.Header == nil {
			if a.member >= 0 && statuses[a.member] == nil {
				errs[a.member] = a.err
			}
			continue
		}
		for i, m := range members {
			if m.ID == a.st.Header.MemberId {
				statuses[i], errs[i] = a.st, nil
			}
		}
	}
	return statuses, errs
}
