package clients

import (
	"context"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/apictl/apictl/internal/servertest"
)

// candidate runs client-go leader election as one process would, with its own client.
type candidate struct {
	id     string
	cancel context.CancelFunc
	done   chan struct{}
}

func TestLeaderElection(t *testing.T) {
	srv := servertest.Start(t)
	var mu sync.Mutex
	leading := map[string]bool{}
	leaders := func() []string {
		mu.Lock()
		defer mu.Unlock()
		var out []string
		for id, on := range leading {
			if on {
				out = append(out, id)
			}
		}
		return out
	}
	start := func(id string) *candidate {
		client := kubernetes.NewForConfigOrDie(rest.CopyConfig(srv.AdminConfig))
		lock := &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Name: "test-leader", Namespace: "default"},
			Client:     client.CoordinationV1(),
			LockConfig: resourcelock.ResourceLockConfig{Identity: id},
		}
		ctx, cancel := context.WithCancel(context.Background())
		c := &candidate{id: id, cancel: cancel, done: make(chan struct{})}
		go func() {
			defer close(c.done)
			leaderelection.RunOrDie(ctx, leaderelection.LeaderElectionConfig{
				Lock:            lock,
				ReleaseOnCancel: true,
				LeaseDuration:   2 * time.Second,
				RenewDeadline:   1 * time.Second,
				RetryPeriod:     200 * time.Millisecond,
				Callbacks: leaderelection.LeaderCallbacks{
					OnStartedLeading: func(context.Context) { mu.Lock(); leading[id] = true; mu.Unlock() },
					OnStoppedLeading: func() { mu.Lock(); leading[id] = false; mu.Unlock() },
				},
			})
		}()
		return c
	}
	one, two := start("one"), start("two")
	defer func() {
		for _, c := range []*candidate{one, two} {
			c.cancel()
			<-c.done
		}
	}()
	eventually(t, "a leader", func() bool { return len(leaders()) == 1 })
	// For several renewals, there is exactly one leader.
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if l := leaders(); len(l) != 1 {
			t.Fatalf("leaders = %v, want exactly one", l)
		}
	}
	first := leaders()[0]
	stopped := one
	if first == "two" {
		stopped = two
	}
	stopped.cancel()
	<-stopped.done
	eventually(t, "fail-over to the other candidate", func() bool {
		l := leaders()
		return len(l) == 1 && l[0] != first
	})
}
