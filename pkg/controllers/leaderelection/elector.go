package leaderelection

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// HealthTimeout is how long past its lease duration a leader may go without renewing before its
// health check fails: kube-controller-manager's leaderElection check allows 20 seconds.
const HealthTimeout = 20 * time.Second

// Config says which Lease to campaign for and how, with client-go's meanings.
type Config struct {
	// Client reads and writes the Lease.
	Client coordinationv1client.LeasesGetter
	// Namespace and Name are the Lease's.
	Namespace, Name string
	// Identity is this replica's holderIdentity: unique per process (kube: hostname_UUID).
	Identity string
	// LeaseDuration is how long others wait after the last renewal before taking over.
	LeaseDuration time.Duration
	// RenewDeadline is how long the leader tries to renew before it gives up leading.
	RenewDeadline time.Duration
	// RetryPeriod is the wait between attempts to acquire or renew.
	RetryPeriod time.Duration
	// Logger receives client-go's election messages ("successfully acquired lease", ...).
	Logger *slog.Logger
	// OnLeading, when set, is told when this replica starts (true) and stops (false) leading.
	OnLeading func(leading bool)
	// Events, when set, receives kube's LeaderElection events on the Lease ("<identity> became
	// leader"), with Component as their source.
	Events    corev1client.EventsGetter
	Component string
}

// Elector campaigns for the Lease until its context ends and runs a function while it leads.
type Elector struct {
	cfg    Config
	health *leaderelection.HealthzAdaptor
}

// New checks cfg as client-go does and returns an Elector.
func New(cfg Config) (*Elector, error) {
	if cfg.Client == nil || cfg.Namespace == "" || cfg.Name == "" || cfg.Identity == "" {
		return nil, errors.New("leader election needs a client, the Lease's namespace and name, and an identity")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	e := &Elector{cfg: cfg, health: leaderelection.NewLeaderHealthzAdaptor(HealthTimeout)}
	// client-go's own checks of the durations, now rather than at the first campaign.
	if _, err := e.newLeaderElector(&term{}, leaderelection.LeaderCallbacks{
		OnStartedLeading: func(context.Context) {}, OnStoppedLeading: func() {},
	}); err != nil {
		return nil, err
	}
	return e, nil
}

// Identity is this replica's holderIdentity.
func (e *Elector) Identity() string { return e.cfg.Identity }

// Describe names the Lease as "namespace/name".
func (e *Elector) Describe() string { return e.cfg.Namespace + "/" + e.cfg.Name }

// Name is the health check's name, kube's "leaderElection".
func (e *Elector) Name() string { return e.health.Name() }

// Check fails when this replica leads but has not renewed the Lease for its duration plus
// HealthTimeout, as kube's leaderElection health check does; a replica that does not lead passes.
func (e *Elector) Check(r *http.Request) error { return e.health.Check(r) }

func (e *Elector) newLeaderElector(t *term, callbacks leaderelection.LeaderCallbacks) (*leaderelection.LeaderElector, error) {
	lease := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: e.cfg.Namespace, Name: e.cfg.Name},
		Client:     e.cfg.Client,
		LockConfig: resourcelock.ResourceLockConfig{Identity: e.cfg.Identity},
	}
	if e.cfg.Events != nil {
		lease.LockConfig.EventRecorder = eventRecorder{client: e.cfg.Events, component: e.cfg.Component, log: e.cfg.Logger, now: time.Now}
	}
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:          releaseAfterStop{Interface: lease, term: t},
		LeaseDuration: e.cfg.LeaseDuration,
		RenewDeadline: e.cfg.RenewDeadline,
		RetryPeriod:   e.cfg.RetryPeriod,
		Callbacks:     callbacks,
		// Released only after the controllers stopped: see releaseAfterStop and campaign.
		ReleaseOnCancel: true,
		Name:            e.cfg.Name,
	})
	if err != nil {
		return nil, fmt.Errorf("configuring leader election on lease %s: %w", e.Describe(), err)
	}
	return le, nil
}

// Run campaigns until ctx ends. Each time this replica wins the Lease it calls lead with a context
// that ends when the Lease is lost or ctx ends, and waits for lead to return before campaigning
// again, so that two terms of one replica never overlap. Run returns once lead has returned and the
// Lease has been released.
func (e *Elector) Run(ctx context.Context, lead func(ctx context.Context)) {
	log := e.cfg.Logger.With("lease", e.Describe(), "identity", e.cfg.Identity)
	// client-go narrates the election at Info ("attempting to acquire", "successfully acquired"); V(4)
	// makes that debug level, as apictl serve does with the rest of klog's output: the owner's
	// OnLeading says at Info when this replica starts and stops leading. Errors keep their level.
	ctx = klog.NewContext(ctx, logr.FromSlogHandler(log.Handler()).V(4))
	for ctx.Err() == nil {
		if err := e.campaign(ctx, lead); err != nil {
			// New checked the same configuration: this does not happen.
			log.Error("leader election cannot run", "err", err)
			return
		}
		if ctx.Err() == nil {
			log.Info("stopped leading: the controllers stopped; campaigning again")
		}
	}
}

// term is one run of lead: started once client-go reports the Lease won.
type term struct {
	mu      sync.Mutex
	closed  bool               // no new run may start: the election ended or is ending
	cancel  context.CancelFunc // ends the run's context; nil before it starts
	running chan struct{}      // closes when the run returns; nil before it starts
}

// start claims the term for a run under parent; false when the election already ended.
func (t *term) start(parent context.Context) (context.Context, chan struct{}, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, nil, false
	}
	ctx, cancel := context.WithCancel(parent)
	t.cancel, t.running = cancel, make(chan struct{})
	return ctx, t.running, true
}

// close forbids a later start, ends a run that started and waits for it to return.
func (t *term) close() {
	t.mu.Lock()
	t.closed = true
	cancel, running := t.cancel, t.running
	t.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	if running != nil {
		<-running
	}
}

// releaseAfterStop is the Lease lock with one change: the release that client-go writes when a term
// ends (an empty holderIdentity) first stops the term and waits for its controllers. client-go
// releases as soon as a renewal fails, before it cancels the leading context; without this a
// successor could take the released Lease and run its controllers beside this replica's.
type releaseAfterStop struct {
	resourcelock.Interface
	term *term
}

// Update writes the Lease record, after the term's controllers stopped when it is the release.
func (l releaseAfterStop) Update(ctx context.Context, r resourcelock.LeaderElectionRecord) error {
	if r.HolderIdentity == "" {
		l.term.close()
	}
	return l.Interface.Update(ctx, r)
}

// campaign is one election: acquire, lead until renewal fails or ctx ends, then stop lead and
// release.
func (e *Elector) campaign(ctx context.Context, lead func(ctx context.Context)) error {
	// client-go releases the Lease when its context ends, and cancels the leading context at the
	// same moment. The election therefore gets a context of its own that ends only once lead has
	// returned after ctx ended: the successor starts after this replica's controllers stopped.
	elCtx, cancelEl := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelEl()
	t := &term{}
	stopAfter := context.AfterFunc(ctx, func() {
		t.close()
		cancelEl()
	})
	defer stopAfter()

	le, err := e.newLeaderElector(t, leaderelection.LeaderCallbacks{
		// client-go calls this in a goroutine of its own, which campaign cannot wait for; term
		// makes sure a run that starts is waited for, and that none starts once the election ended.
		OnStartedLeading: func(leCtx context.Context) {
			runCtx, done, ok := t.start(leCtx)
			if !ok {
				return
			}
			defer close(done)
			if e.cfg.OnLeading != nil {
				e.cfg.OnLeading(true)
				defer e.cfg.OnLeading(false)
			}
			lead(runCtx)
		},
		OnStoppedLeading: func() {},
	})
	if err != nil {
		return err
	}
	e.health.SetLeaderElection(le)
	le.Run(elCtx)
	t.close()
	return nil
}

// ReleaseRenewedBefore releases the Lease, as its holder would on shutdown (client-go's release: no
// holder, a lease of one second), when another identity holds it and last renewed it before
// before, and returns that identity ("" when nothing was released). It is for data restored from a
// snapshot at before: the holder it names ran on other data and can never renew here, and
// client-go's candidates would otherwise wait out a full lease duration, counted from when they
// first see the record, for it. The update is conditional on the Lease's resourceVersion, so a
// holder that did renew meanwhile keeps it.
func (e *Elector) ReleaseRenewedBefore(ctx context.Context, before time.Time) (string, error) {
	leases := e.cfg.Client.Leases(e.cfg.Namespace)
	lease, err := leases.Get(ctx, e.cfg.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("reading the lease %s: %w", e.Describe(), err)
	}
	holder := ptr.Deref(lease.Spec.HolderIdentity, "")
	renewed := lease.Spec.RenewTime
	if renewed == nil {
		renewed = lease.Spec.AcquireTime
	}
	if holder == "" || holder == e.cfg.Identity || (renewed != nil && !renewed.Time.Before(before)) {
		return "", nil
	}
	now := metav1.NewMicroTime(time.Now())
	lease.Spec.HolderIdentity = ptr.To("")
	lease.Spec.LeaseDurationSeconds = ptr.To[int32](1)
	lease.Spec.RenewTime, lease.Spec.AcquireTime = &now, &now
	if _, err := leases.Update(ctx, lease, metav1.UpdateOptions{}); err != nil {
		if apierrors.IsConflict(err) {
			return "", nil
		}
		return "", fmt.Errorf("releasing the lease %s held by %s: %w", e.Describe(), holder, err)
	}
	return holder, nil
}
