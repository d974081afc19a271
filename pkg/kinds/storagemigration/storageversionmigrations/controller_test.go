package storageversionmigrations

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"testing"
	"time"

	svmv1 "k8s.io/api/storagemigration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// noDiscovery is a mapper that knows no resource, as discovery of a resource nobody serves.
type noDiscovery struct{ meta.RESTMapper }

func (noDiscovery) Reset() {}

func migration(name string, created time.Time, gr metav1.GroupResource, conditions ...metav1.Condition) *svmv1.StorageVersionMigration {
	return &svmv1.StorageVersionMigration{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(created)},
		Spec: svmv1.StorageVersionMigrationSpec{Resource: gr}, Status: svmv1.StorageVersionMigrationStatus{Conditions: conditions}}
}

func condition(t svmv1.MigrationConditionType, s metav1.ConditionStatus) metav1.Condition {
	return metav1.Condition{Type: string(t), Status: s}
}

// TestUnservedResourceFails: a migration of a resource nobody serves waits kube's minute for it
// to appear, then fails with kube's condition, at the step that finds it missing.
func TestUnservedResourceFails(t *testing.T) {
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	gr := metav1.GroupResource{Resource: "foo"}
	for _, tt := range []struct {
		name        string
		status      svmv1.StorageVersionMigrationStatus
		step        func(*controller, context.Context, *svmv1.StorageVersionMigration) error
		wantMessage string
	}{
		{"before its resourceVersion", svmv1.StorageVersionMigrationStatus{}, (*controller).recordResourceVersion,
			"resource does not exist in discovery"},
		{"once it migrates", svmv1.StorageVersionMigrationStatus{ResourceVersion: "10"}, (*controller).migrate,
			"migration encountered unhandled error: unable to obtain GVR from discovery"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			svm := migration("m", created, gr, metav1.Condition{Type: "Running", Status: metav1.ConditionTrue, Reason: reasonRunning, Message: "The migration is running"})
			svm.Status.ResourceVersion = tt.status.ResourceVersion
			client := fake.NewClientset(svm)
			now := created.Add(30 * time.Second)
			c := &controller{svms: client.StoragemigrationV1().StorageVersionMigrations(), mapper: noDiscovery{meta.NewDefaultRESTMapper(nil)},
				log: slog.New(slog.DiscardHandler), now: func() time.Time { return now }}
			ctx := context.Background()

			err := tt.step(c, ctx, svm.DeepCopy())
			var again requeue
			if !errors.As(err, &again) || again.after <= 0 || again.after > mapperResetEvery {
				t.Fatalf("within the minute: %v, want a requeue within %s", err, mapperResetEvery)
			}
			now = created.Add(resourceGrace + time.Second)
			if err := tt.step(c, ctx, svm.DeepCopy()); err != nil {
				t.Fatal(err)
			}
			got, err := client.StoragemigrationV1().StorageVersionMigrations().Get(ctx, "m", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			failed := meta.FindStatusCondition(got.Status.Conditions, string(svmv1.MigrationFailed))
			if failed == nil || failed.Status != metav1.ConditionTrue || failed.Reason != "StorageVersionMigrationFailed" || failed.Message != tt.wantMessage {
				t.Errorf("Failed condition %+v, want kube's %q", failed, tt.wantMessage)
			}
		})
	}
}

// TestPlan: one migration of a resource runs at a time, the oldest first; those that ended but
// still say Running are cleaned up; other resources' migrations are not looked at.
func TestPlan(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	gr := metav1.GroupResource{Group: "example.com", Resource: "widgets"}
	other := metav1.GroupResource{Resource: "configmaps"}
	running, done := condition(svmv1.MigrationRunning, metav1.ConditionTrue), condition(svmv1.MigrationSucceeded, metav1.ConditionTrue)
	stopped := condition(svmv1.MigrationRunning, metav1.ConditionFalse)
	for _, tt := range []struct {
		name                     string
		all                      []*svmv1.StorageVersionMigration
		cleanup, active, promote []string
	}{
		{"the oldest waiting starts", []*svmv1.StorageVersionMigration{
			migration("b", t0.Add(time.Second), gr), migration("c", t0, gr), migration("a", t0.Add(time.Second), gr), migration("x", t0.Add(-time.Hour), other)},
			nil, nil, []string{"c"}},
		{"same time: by name", []*svmv1.StorageVersionMigration{migration("b", t0, gr), migration("a", t0, gr)}, nil, nil, []string{"a"}},
		{"one running: none starts", []*svmv1.StorageVersionMigration{migration("a", t0, gr), migration("b", t0.Add(time.Second), gr, running)},
			nil, []string{"b"}, nil},
		{"ended and running: cleaned up, the next starts", []*svmv1.StorageVersionMigration{
			migration("a", t0, gr, running, done), migration("b", t0.Add(time.Second), gr)}, []string{"a"}, nil, []string{"b"}},
		{"ended and stopped: nothing", []*svmv1.StorageVersionMigration{migration("a", t0, gr, stopped, done)}, nil, nil, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cleanup, active, promote := plan(tt.all, gr)
			names := func(svms ...*svmv1.StorageVersionMigration) []string {
				var out []string
				for _, s := range svms {
					if s != nil {
						out = append(out, s.Name)
					}
				}
				return out
			}
			if got := names(cleanup...); !slices.Equal(got, tt.cleanup) {
				t.Errorf("cleanup %v, want %v", got, tt.cleanup)
			}
			if got := names(active); !slices.Equal(got, tt.active) {
				t.Errorf("active %v, want %v", got, tt.active)
			}
			if got := names(promote); !slices.Equal(got, tt.promote) {
				t.Errorf("promote %v, want %v", got, tt.promote)
			}
		})
	}
}

func TestRunningMessage(t *testing.T) {
	n := func(i int) *int { return &i }
	for _, tt := range []struct {
		pending, total *int
		err            error
		want           string
	}{
		{nil, nil, nil, "The migration is running"},
		{n(0), n(0), nil, "The migration is running"},
		{n(3), n(10), nil, "The migration is running, 3/10 objects not yet migrated"},
		{n(0), n(10), nil, "The migration is running, 10 objects verified migrated"},
		{n(3), n(10), errors.New("etcdserver: leader changed"), "The migration is running, 3/10 objects not yet migrated; transient error: etcdserver: leader changed"},
	} {
		if got := runningMessage(tt.pending, tt.total, tt.err); got != tt.want {
			t.Errorf("runningMessage = %q, want %q", got, tt.want)
		}
	}
}
