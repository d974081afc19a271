package status

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// fakeEtcd answers Status for the URLs in up, naming the member each reaches.
type fakeEtcd struct {
	members []*etcdserverpb.Member
	up      map[string]uint64
}

func (f *fakeEtcd) MemberList(context.Context, ...clientv3.OpOption) (*clientv3.MemberListResponse, error) {
	return &clientv3.MemberListResponse{Header: &etcdserverpb.ResponseHeader{MemberId: f.members[0].ID}, Members: f.members}, nil
}

func (f *fakeEtcd) Status(_ context.Context, url string) (*clientv3.StatusResponse, error) {
	id, ok := f.up[url]
	if !ok {
		return nil, errors.New("dial " + url + ": connection refused")
	}
	return &clientv3.StatusResponse{Header: &etcdserverpb.ResponseHeader{MemberId: id}, Leader: 1, RaftIndex: 10 * id, DbSize: 1 << 20}, nil
}

func (f *fakeEtcd) AlarmList(context.Context) (*clientv3.AlarmResponse, error) {
	return &clientv3.AlarmResponse{}, nil
}

// TestEtcdFactsRoutes checks which URL answers for which member: the server's own endpoints answer
// for the member behind them whatever it advertises (a port 0, a loopback address behind a proxy),
// a member's advertised URL for it otherwise, and a member no route reaches gets its own URL's error.
func TestEtcdFactsRoutes(t *testing.T) {
	members := []*etcdserverpb.Member{
		{ID: 1, Name: "a", ClientURLs: []string{"http://127.0.0.1:0"}},
		{ID: 2, Name: "b", ClientURLs: []string{"https://b:2379"}},
		{ID: 3, Name: "c", ClientURLs: []string{"https://c:2379"}},
	}
	for _, tt := range []struct {
		name    string
		src     EtcdSource
		up      map[string]uint64
		indexes []uint64 // by member; 0 for none
		failed  []bool
	}{
		{name: "external etcd through a proxy", src: EtcdSource{Endpoints: []string{"https://proxy:2379"}},
			up: map[string]uint64{"https://proxy:2379": 1, "https://b:2379": 2}, indexes: []uint64{10, 20, 0}, failed: []bool{false, false, true}},
		{name: "embedded, only its own member", src: EtcdSource{Endpoints: []string{"https://127.0.0.1:4001"}, LocalOnly: true},
			up: map[string]uint64{"https://127.0.0.1:4001": 1, "https://b:2379": 2}, indexes: []uint64{10, 0, 0}, failed: []bool{false, false, false}},
		{name: "embedded member down", src: EtcdSource{Endpoints: []string{"https://127.0.0.1:4001"}, LocalOnly: true},
			up: map[string]uint64{}, indexes: []uint64{0, 0, 0}, failed: []bool{true, false, false}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.src.Client = &fakeEtcd{members: members, up: tt.up}
			e := etcdFacts(context.Background(), tt.src, &learnerClock{}, time.Now())
			for i, m := range e.Members {
				if m.RaftIndex != tt.indexes[i] || (m.Error != "") != tt.failed[i] {
					t.Errorf("member %s: index %d, error %q; want index %d, failed %v", m.Name, m.RaftIndex, m.Error, tt.indexes[i], tt.failed[i])
				}
			}
		})
	}
}
