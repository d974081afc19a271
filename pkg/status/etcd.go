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
	// Endpoint is the member Client reaches. When LocalOnly, it is the only member whose Status can be
	// asked: apictl's private embedded etcd listens for clients on loopback, with a CA of its own.
	Endpoint  string
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
	statuses := make([]*clientv3.StatusResponse, len(list.Members))
	errs := make([]error, len(list.Members))
	var wg sync.WaitGroup
	var local uint64
	if list.Header != nil {
		local = list.Header.MemberId
	}
	for i, m := range list.Members {
		endpoint := ""
		switch {
		case src.LocalOnly && m.ID == local:
			endpoint = src.Endpoint
		case !src.LocalOnly && len(m.ClientURLs) > 0:
			endpoint = m.ClientURLs[0]
		}
		if endpoint == "" {
			continue
		}
		wg.Go(func() {
			statuses[i], errs[i] = src.Client.Status(ctx, endpoint)
		})
	}
	alarms, alarmErr := src.Client.AlarmList(ctx)
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
