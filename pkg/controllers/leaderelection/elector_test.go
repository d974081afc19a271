package leaderelection

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
)

const (
	testNamespace = "kube-system"
	testLease     = "apictl-controllers"
)

// newFakeLeases is a clientset whose Leases have an API server's optimistic concurrency: an update
// from a stale resourceVersion is a conflict, as two electors racing for an expired Lease meet it.
func newFakeLeases() *fake.Clientset {
	cs := fake.NewClientset()
	var rv atomic.Int64
	gvr := coordinationv1.SchemeGroupVersion.WithResource("leases")
	cs.PrependReactor("create", "leases", func(a k8stesting.Action) (bool, runtime.Object, error) {
		a.(k8stesting.CreateAction).GetObject().(*coordinationv1.Lease).ResourceVersion = strconv.FormatInt(rv.Add(1), 10)
		return false, nil, nil
	})
	cs.PrependReactor("update", "leases", func(a k8stesting.Action) (bool, runtime.Object, error) {
		l := a.(k8stesting.UpdateAction).GetObject().(*coordinationv1.Lease)
		cur, err := cs.Tracker().Get(gvr, l.Namespace, l.Name)
		if err != nil {
			return true, nil, err
		}
		if cur.(*coordinationv1.Lease).ResourceVersion != l.ResourceVersion {
			return true, nil, apierrors.NewConflict(gvr.GroupResource(), l.Name, fmt.Errorf("the object has been modified"))
		}
		l.ResourceVersion = strconv.FormatInt(rv.Add(1), 10)
		return false, nil, nil
	})
	return cs
}

func testConfig(cs *fake.Clientset, id string) Config {
	return Config{Client: cs.CoordinationV1(), Namespace: testNamespace, Name: testLease, Identity: id,
		LeaseDuration: time.Second, RenewDeadline: 500 * time.Millisecond, RetryPeriod: 100 * time.Millisecond}
}

// leads counts the replicas that lead at once and remembers the most ever seen.
type leads struct {
	now, most atomic.Int32
	terms     sync.Map // identity -> *atomic.Int32, the terms it started
	// linger is how long a lead keeps running after its context ended, like a controller that
	// takes a while to stop.
	linger time.Duration
}

func (l *leads) lead(id string) func(ctx context.Context) {
	return func(ctx context.Context) {
		n := l.now.Add(1)
		for {
			m := l.most.Load()
			if n <= m || l.most.CompareAndSwap(m, n) {
				break
			}
		}
		c, _ := l.terms.LoadOrStore(id, new(atomic.Int32))
		c.(*atomic.Int32).Add(1)
		<-ctx.Done()
		time.Sleep(l.linger)
		l.now.Add(-1)
	}
}

func (l *leads) termsOf(id string) int32 {
	c, ok := l.terms.Load(id)
	if !ok {
		return 0
	}
	return c.(*atomic.Int32).Load()
}

func holder(t *testing.T, cs *fake.Clientset) string {
	t.Helper()
	l, err := cs.CoordinationV1().Leases(testNamespace).Get(context.Background(), testLease, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading the lease: %v", err)
	}
	return ptr.Deref(l.Spec.HolderIdentity, "")
}

func eventually(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", within, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestNewChecksDurations(t *testing.T) {
	cs := newFakeLeases()
	for name, change := range map[string]func(*Config){
		"renew deadline not below lease duration":  func(c *Config) { c.RenewDeadline = c.LeaseDuration },
		"retry period too close to renew deadline": func(c *Config) { c.RetryPeriod = c.RenewDeadline },
		"no identity":   func(c *Config) { c.Identity = "" },
		"no lease name": func(c *Config) { c.Name = "" },
	} {
		t.Run(name, func(t *testing.T) {
			cfg := testConfig(cs, "a")
			change(&cfg)
			if _, err := New(cfg); err == nil {
				t.Fatal("New accepted the configuration")
			}
		})
	}
	if _, err := New(testConfig(cs, "a")); err != nil {
		t.Fatalf("New refused a good configuration: %v", err)
	}
}

// Two replicas on one Lease: exactly one leads; when it stops, the other takes over without waiting
// for the Lease to expire (it was released), and only after the first one's controllers returned.
func TestOneLeaderAndHandOver(t *testing.T) {
	cs := newFakeLeases()
	l := &leads{linger: 300 * time.Millisecond}
	var leading sync.Map
	run := func(id string) (context.CancelFunc, chan struct{}) {
		cfg := testConfig(cs, id)
		// A lease far longer than the hand-over: the successor must take over because the Lease was
		// released, never because it expired while a loaded machine (CI's -race run) delayed the
		// leader's renewals past a one-second lease, which would let two lead by expiry.
		cfg.LeaseDuration, cfg.RenewDeadline = 5*time.Second, 3*time.Second
		cfg.OnLeading = func(on bool) { leading.Store(id, on) }
		e, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			e.Run(ctx, l.lead(id))
		}()
		return cancel, done
	}
	stopA, doneA := run("a")
	stopB, doneB := run("b")
	defer func() {
		stopA()
		stopB()
		<-doneA
		<-doneB
	}()
	eventually(t, 3*time.Second, "one replica leads", func() bool { return l.now.Load() == 1 })
	time.Sleep(time.Second) // a few renewals and retries: still one
	if got := l.most.Load(); got != 1 {
		t.Fatalf("%d replicas led at once", got)
	}
	first := holder(t, cs)
	second, stopFirst, doneFirst := "b", stopA, doneA
	if first == "b" {
		second, stopFirst, doneFirst = "a", stopB, doneB
	} else if first != "a" {
		t.Fatalf("the lease is held by %q", first)
	}
	if on, _ := leading.Load(first); on != true {
		t.Fatalf("OnLeading(true) was not called for the leader %s", first)
	}

	stopped := time.Now()
	stopFirst()
	<-doneFirst
	if on, _ := leading.Load(first); on != false {
		t.Fatalf("OnLeading(false) was not called for %s after it stopped", first)
	}
	eventually(t, 800*time.Millisecond, "the other replica takes over before the lease would expire", func() bool {
		return l.termsOf(second) == 1
	})
	if took := time.Since(stopped); took > time.Second {
		t.Fatalf("the takeover took %v: the lease was not released", took)
	}
	if got := l.most.Load(); got != 1 {
		t.Fatalf("%d replicas led at once during the hand-over", got)
	}
	if h := holder(t, cs); h != second {
		t.Fatalf("the lease is held by %q, want %q", h, second)
	}
}

// A leader that cannot renew (another holder took the Lease) stops its controllers within the
// renew deadline, goes on campaigning, and leads again with a fresh context once it can.
func TestLostLeaseStopsThenLeadsAgain(t *testing.T) {
	cs := newFakeLeases()
	l := &leads{}
	e, err := New(testConfig(cs, "a"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.Run(ctx, l.lead("a"))
	}()
	defer func() {
		cancel()
		<-done
	}()
	eventually(t, 3*time.Second, "the replica leads", func() bool { return l.now.Load() == 1 })
	if err := e.Check(nil); err != nil {
		t.Fatalf("the health check of a renewing leader failed: %v", err)
	}

	// Another holder takes the Lease for a second.
	lease, err := cs.CoordinationV1().Leases(testNamespace).Get(ctx, testLease, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	lease.Spec.HolderIdentity = ptr.To("thief")
	lease.Spec.LeaseDurationSeconds = ptr.To[int32](1)
	lease.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
	if _, err := cs.CoordinationV1().Leases(testNamespace).Update(ctx, lease, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	stolen := time.Now()
	eventually(t, 2*time.Second, "the controllers stop", func() bool { return l.now.Load() == 0 })
	// Renewal is retried for the renew deadline, then a last retry period passes.
	if took := time.Since(stolen); took > 800*time.Millisecond {
		t.Fatalf("the controllers stopped %v after the lease was lost, want within the renew deadline", took)
	}
	eventually(t, 3*time.Second, "the replica leads again", func() bool { return l.termsOf("a") == 2 && l.now.Load() == 1 })
	if h := holder(t, cs); h != "a" {
		t.Fatalf("the lease is held by %q", h)
	}
}

// Shutdown cancels the controllers and returns only after they returned and the Lease was released.
func TestShutdownWaitsThenReleases(t *testing.T) {
	cs := newFakeLeases()
	l := &leads{linger: 200 * time.Millisecond}
	cfg := testConfig(cs, "a")
	cfg.Events, cfg.Component = cs.CoreV1(), "apictl"
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var heldWhenStopped atomic.Value
	go func() {
		defer close(done)
		e.Run(ctx, func(ctx context.Context) {
			l.lead("a")(ctx)
			heldWhenStopped.Store(holder(t, cs))
		})
	}()
	eventually(t, 3*time.Second, "the replica leads", func() bool { return l.now.Load() == 1 })
	cancel()
	<-done
	if l.now.Load() != 0 {
		t.Fatal("Run returned before the controllers did")
	}
	if h := heldWhenStopped.Load(); h != "a" {
		t.Fatalf("the lease was held by %q when the controllers returned: released too early", h)
	}
	if h := holder(t, cs); h != "" {
		t.Fatalf("the lease is still held by %q after shutdown", h)
	}
	// kube's events on the Lease, as kube-controller-manager's: reason LeaderElection.
	events, err := cs.CoreV1().Events(testNamespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range events.Items {
		o := ev.InvolvedObject
		if ev.Reason != "LeaderElection" || ev.Type != "Normal" || ev.Source.Component != "apictl" || ev.Count != 1 ||
			o.Kind != "Lease" || o.APIVersion != "coordination.k8s.io/v1" || o.Name != testLease || !strings.HasPrefix(ev.Name, testLease+".") {
			t.Errorf("event %+v is not kube's", ev)
		}
		got = append(got, ev.Message)
	}
	slices.Sort(got)
	if want := []string{"a became leader", "a stopped leading"}; !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
}
