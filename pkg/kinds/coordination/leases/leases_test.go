package leases

import (
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestStoreRules pins what kube's lease strategy says to the generic store: leader election's client
// creates its Lease with a PUT, and its updates are conditional.
func TestStoreRules(t *testing.T) {
	if s := Kind().Store; !s.AllowCreateOnUpdate || !s.RequireResourceVersion || s.ReturnDeletedObject {
		t.Errorf("store rules %+v", s)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		spec coordinationv1.LeaseSpec
		want string // the aggregate error; "" for none
	}{
		{"empty", coordinationv1.LeaseSpec{}, ""},
		{"held", coordinationv1.LeaseSpec{HolderIdentity: ptr.To("a"), LeaseDurationSeconds: ptr.To[int32](15), LeaseTransitions: ptr.To[int32](0)}, ""},
		{"zero duration", coordinationv1.LeaseSpec{LeaseDurationSeconds: ptr.To[int32](0)}, "spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0"},
		{"negative transitions", coordinationv1.LeaseSpec{LeaseTransitions: ptr.To[int32](-1)},
			"spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "l", Namespace: "ns"}, Spec: tt.spec}
			got := ""
			if err := (strategy{}).ValidateUpdate(l, l).ToAggregate(); err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestCells: kubectl's HOLDER column is empty for a Lease nobody holds.
func TestCells(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	created := metav1.NewTime(now.Add(-90 * time.Second))
	for _, tt := range []struct {
		holder *string
		want   string
	}{{nil, ""}, {ptr.To("replica-1"), "replica-1"}} {
		row := cells(&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "l", CreationTimestamp: created}, Spec: coordinationv1.LeaseSpec{HolderIdentity: tt.holder}}, now)
		if row[0] != "l" || row[1] != tt.want || row[2] != "90s" {
			t.Errorf("row %v, want [l %q 90s]", row, tt.want)
		}
	}
}
