package leases

import (
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationlisters "k8s.io/client-go/listers/coordination/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

// TestIdentityName pins kube-apiserver v1.37.2's identity Lease name, read from the reference server
// on a host named vm.
func TestIdentityName(t *testing.T) {
	for host, want := range map[string]string{"vm": "apiserver-wlv32tlttr4jl3gtroqexyxapa"} {
		got, err := IdentityName(host)
		if err != nil || got != want {
			t.Errorf("IdentityName(%q) = %q, %v; want %q", host, got, err, want)
		}
	}
}

func TestMembersAndIdentities(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	lease := func(name string, labels, annotations map[string]string, renewed time.Duration, duration int32) *coordinationv1.Lease {
		return &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: name, Labels: labels, Annotations: annotations},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(name + "_holder"), LeaseDurationSeconds: ptr.To(duration),
				RenewTime: ptr.To(metav1.NewMicroTime(now.Add(-renewed)))},
		}
	}
	status := map[string]string{MemberAnnotation: `{"dbSizeBytes":4096,"dbSizeInUseBytes":2048,"raftTerm":3,"raftIndex":99}`}
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, l := range []*coordinationv1.Lease{
		lease("apictl-etcd-member-a1", map[string]string{MemberLabel: "a1"}, status, 5*time.Second, 60),
		lease("apictl-etcd-member-b2", map[string]string{MemberLabel: "b2"}, status, 2*time.Minute, 60), // expired
		lease("apictl-etcd-member-c3", map[string]string{MemberLabel: "c3"}, nil, time.Second, 60),      // no status yet
		lease("apictl-etcd-member-zz", map[string]string{MemberLabel: "not-hex"}, status, time.Second, 60),
		lease("apiserver-one", map[string]string{IdentityLabel: IdentityValue}, nil, 10*time.Second, 3600),
		lease("apiserver-gone", map[string]string{IdentityLabel: IdentityValue}, nil, 2*time.Hour, 3600),
		lease("apictl-controllers", nil, nil, time.Second, 15),
	} {
		if err := idx.Add(l); err != nil {
			t.Fatal(err)
		}
	}
	lister := coordinationlisters.NewLeaseLister(idx)
	members := Members(lister, now)
	want := Member{MemberStatus: MemberStatus{DBSize: 4096, DBInUse: 2048, RaftTerm: 3, RaftIndex: 99}, Reported: now.Add(-5 * time.Second)}
	if len(members) != 1 || !members[0xa1].Reported.Equal(want.Reported) || members[0xa1].MemberStatus != want.MemberStatus {
		t.Errorf("members %+v, want only a1: %+v", members, want)
	}
	if got := Identities(lister, now); len(got) != 1 || got[0] != "apiserver-one_holder" {
		t.Errorf("identities %q, want only apiserver-one's holder", got)
	}
}
