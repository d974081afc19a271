package etcd3

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// NoSpaceAlarm reports whether etcd has raised its NOSPACE alarm: its database reached the quota and it
// refuses writes until the alarm is disarmed.
func (s *Store) NoSpaceAlarm(ctx context.Context) (bool, error) {
	resp, err := s.client.AlarmList(ctx)
	if err != nil {
		return false, s.interpret("alarm list", "", err)
	}
	for _, a := range resp.Alarms {
		if a.Alarm == etcdserverpb.AlarmType_NOSPACE {
			return true, nil
		}
	}
	return false, nil
}

// RecoverSpace is what an operator does about etcd's NOSPACE alarm, for a single-member etcd that
// apictl runs itself: compact away the history, defragment to hand the freed pages back, and disarm
// the alarm once the database is under nine tenths of quota. It reports whether writes are possible
// again. Compacting everything ends watches that are behind (they re-list), as any compaction does.
func (s *Store) RecoverSpace(ctx context.Context, quota int64) (bool, error) {
	rev, err := s.readRevision(ctx)
	if err != nil {
		return false, err
	}
	if _, err := s.client.Compact(ctx, rev, clientv3.WithCompactPhysical()); err != nil && !errors.Is(err, rpctypes.ErrCompacted) {
		return false, s.interpret("compact", "", err)
	}
	var size int64
	var members []uint64
	for _, ep := range s.client.Endpoints() {
		if _, err := s.client.Defragment(ctx, ep); err != nil {
			return false, s.interpret("defragment", ep, err)
		}
		st, err := s.client.Status(ctx, ep)
		if err != nil {
			return false, s.interpret("status", ep, err)
		}
		size = max(size, st.DbSize)
		members = append(members, st.Header.MemberId)
	}
	if size >= quota/10*9 {
		return false, fmt.Errorf("etcd's database is still %d bytes after compaction and defragmentation, too close to its quota of %d: delete objects or raise --etcd-quota-backend-bytes", size, quota)
	}
	for _, m := range members {
		if _, err := s.client.AlarmDisarm(ctx, &clientv3.AlarmMember{MemberID: m, Alarm: etcdserverpb.AlarmType_NOSPACE}); err != nil {
			return false, s.interpret("alarm disarm", "", err)
		}
	}
	return true, nil
}
