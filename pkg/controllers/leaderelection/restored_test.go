package leaderelection

import (
	"context"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestReleaseRenewedBefore: a Lease another identity last renewed before the restore is released,
// and a candidate then leads at once, not a lease duration later; a Lease renewed since, or held by
// this identity, is left alone.
func TestReleaseRenewedBefore(t *testing.T) {
	restoredAt := time.Now()
	tests := []struct {
		name        string
		holder      string
		renewed     time.Time
		wantRelease bool
	}{
		{"the saved server's", "old_1", restoredAt.Add(-time.Minute), true},
		{"renewed since the restore", "other_2", restoredAt.Add(time.Second), false},
		{"this server's own", "me", restoredAt.Add(-time.Minute), false},
		{"released already", "", restoredAt.Add(-time.Minute), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := newFakeLeases()
			renewed := metav1.NewMicroTime(tt.renewed)
			_, err := cs.CoordinationV1().Leases(testNamespace).Create(context.Background(), &coordinationv1.Lease{
				ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: testLease},
				Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(tt.holder), LeaseDurationSeconds: ptr.To[int32](60),
					AcquireTime: &renewed, RenewTime: &renewed},
			}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			cfg := testConfig(cs, "me")
			cfg.LeaseDuration, cfg.RenewDeadline = 60*time.Second, 40*time.Second
			e, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			released, err := e.ReleaseRenewedBefore(context.Background(), restoredAt)
			if err != nil {
				t.Fatal(err)
			}
			if got := released != ""; got != tt.wantRelease {
				t.Fatalf("released %q, want a release: %t", released, tt.wantRelease)
			}
			if !tt.wantRelease {
				if h := holder(t, cs); h != tt.holder {
					t.Errorf("holder %q, want %q left alone", h, tt.holder)
				}
				return
			}
			ctx, cancel := context.WithCancel(context.Background())
			led := make(chan time.Time, 1)
			began := time.Now()
			done := make(chan struct{})
			go func() {
				defer close(done)
				e.Run(ctx, func(ctx context.Context) {
					select {
					case led <- time.Now():
					default:
					}
					<-ctx.Done()
				})
			}()
			defer func() { cancel(); <-done }()
			select {
			case at := <-led:
				if d := at.Sub(began); d > time.Second {
					t.Errorf("led %s after the release, want at once", d)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("did not lead within 5s of the release (the lease lasts 60s)")
			}
		})
	}
}
