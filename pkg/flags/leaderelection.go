package flags

import (
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"
)

// SectionLeaderElection holds the --leader-elect* flags, under kube-scheduler's heading "Leader
// election flags".
const SectionLeaderElection = "leader election"

// DefaultLeaderElectionLease is the Lease the once-per-cluster controllers are elected on. It is not
// kube-controller-manager's: apictl's set (namespace, garbage collector, service accounts, RBAC
// aggregation, and kube-apiserver's CRD and APIService status writers) is not kube-controller-manager's
// set, so sharing that name would make a real kube-controller-manager and apictl exclude each other
// while neither runs what the other does.
const DefaultLeaderElectionLease = "apictl-controllers"

// leaseLockLeases is the only lock kind client-go still has ("leases").
const leaseLockLeases = "leases"

// jitterFactor is client-go's leaderelection.JitterFactor: retries wait up to 20% longer.
const jitterFactor = 1.2

// LeaderElectionOptions are kube's LeaderElectionConfiguration flags: which replica of several on one
// etcd runs the cluster-wide controllers. The settings configure pkg/apiserver's controllers, not
// the serving of requests, so there is nothing to apply to serve.Config: pkg/apiserver reads them.
type LeaderElectionOptions struct {
	// LeaderElect runs the cluster-wide controllers only while this replica holds the Lease; false
	// runs them always (one replica, or a cluster where another component runs them once).
	LeaderElect bool
	// LeaseDuration is how long the others wait after the holder's last renewal before taking over:
	// the longest that no replica runs the controllers after the holder dies without releasing.
	LeaseDuration time.Duration
	// RenewDeadline is how long the holder tries to renew before it stops its controllers.
	RenewDeadline time.Duration
	// RetryPeriod is the wait between attempts to acquire or renew.
	RetryPeriod time.Duration
	// ResourceLock is the kind of lock: only "leases".
	ResourceLock string
	// ResourceName and ResourceNamespace name the coordination.k8s.io/v1 Lease.
	ResourceName      string
	ResourceNamespace string
}

// NewLeaderElectionOptions returns kube-controller-manager's defaults, with apictl's Lease name.
func NewLeaderElectionOptions() *LeaderElectionOptions {
	return &LeaderElectionOptions{
		LeaderElect:       true,
		LeaseDuration:     15 * time.Second,
		RenewDeadline:     10 * time.Second,
		RetryPeriod:       2 * time.Second,
		ResourceLock:      leaseLockLeases,
		ResourceName:      DefaultLeaderElectionLease,
		ResourceNamespace: "kube-system",
	}
}

// AddFlags registers kube's --leader-elect* flags, with kube's help where it applies.
func (o *LeaderElectionOptions) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect, ""+
		"Start a leader election client and gain leadership before running the cluster-wide controllers "+
		"(namespace, garbage collector, service accounts, RBAC aggregation, CRD and APIService status). "+
		"Every replica serves the API either way; only the holder of the Lease runs them. Enable this when "+
		"running several replicas on one etcd.")
	fs.DurationVar(&o.LeaseDuration, "leader-elect-lease-duration", o.LeaseDuration, ""+
		"The duration that non-leader candidates will wait after observing a leadership "+
		"renewal until attempting to acquire leadership of a led but unrenewed leader "+
		"slot. This is effectively the maximum duration that a leader can be stopped "+
		"before it is replaced by another candidate. A replica that stops gracefully releases the lease at once; "+
		"one that is killed (SIGKILL) holds it until it expires. This is only applicable if leader election is enabled.")
	fs.DurationVar(&o.RenewDeadline, "leader-elect-renew-deadline", o.RenewDeadline, ""+
		"The interval between attempts by the acting master to renew a leadership slot "+
		"before it stops leading. This must be less than the lease duration. "+
		"This is only applicable if leader election is enabled.")
	fs.DurationVar(&o.RetryPeriod, "leader-elect-retry-period", o.RetryPeriod, ""+
		"The duration the clients should wait between attempting acquisition and renewal "+
		"of a leadership. This is only applicable if leader election is enabled.")
	fs.StringVar(&o.ResourceLock, "leader-elect-resource-lock", o.ResourceLock, ""+
		"The type of resource object that is used for locking during "+
		"leader election. Supported options are 'leases'.")
	fs.StringVar(&o.ResourceName, "leader-elect-resource-name", o.ResourceName, ""+
		"The name of resource object that is used for locking during "+
		"leader election.")
	fs.StringVar(&o.ResourceNamespace, "leader-elect-resource-namespace", o.ResourceNamespace, ""+
		"The namespace of resource object that is used for locking during "+
		"leader election.")
}

// Complete trims the names; nothing else follows from other settings.
func (o *LeaderElectionOptions) Complete() error {
	o.ResourceLock = strings.TrimSpace(o.ResourceLock)
	o.ResourceName = strings.TrimSpace(o.ResourceName)
	o.ResourceNamespace = strings.TrimSpace(o.ResourceNamespace)
	return nil
}

// Validate makes kube's checks (component-base's ValidateLeaderElectionConfiguration) and those that
// client-go would fail the start with, all at once, when leader election is on.
func (o *LeaderElectionOptions) Validate() []error {
	if !o.LeaderElect {
		return nil
	}
	var errs []error
	problem := func(flag, value, format string, args ...any) {
		errs = append(errs, problemf(SectionLeaderElection, flag, value, format, args...))
	}
	positive := true
	for _, d := range []struct {
		flag  string
		value time.Duration
	}{{"leader-elect-lease-duration", o.LeaseDuration}, {"leader-elect-renew-deadline", o.RenewDeadline}, {"leader-elect-retry-period", o.RetryPeriod}} {
		if d.value <= 0 {
			problem(d.flag, d.value.String(), "must be greater than zero")
			positive = false
		}
	}
	if positive {
		switch {
		case o.LeaseDuration <= o.RenewDeadline:
			problem("leader-elect-renew-deadline", o.RenewDeadline.String(),
				"must be less than --leader-elect-lease-duration (%s): the leader must give up before others may take over", o.LeaseDuration)
		case o.LeaseDuration < time.Second:
			// The Lease holds whole seconds: less would be stored as 0, a lease that is always expired.
			problem("leader-elect-lease-duration", o.LeaseDuration.String(), "must be at least 1s: the Lease stores whole seconds")
		}
		if float64(o.RenewDeadline) <= jitterFactor*float64(o.RetryPeriod) {
			problem("leader-elect-retry-period", o.RetryPeriod.String(),
				"must be less than --leader-elect-renew-deadline (%s) divided by %.1f: retries wait up to 20%% longer, and at least one must fit in the renew deadline",
				o.RenewDeadline, jitterFactor)
		}
	}
	if o.ResourceLock != leaseLockLeases {
		problem("leader-elect-resource-lock", o.ResourceLock, "is not supported: use %s (a coordination.k8s.io/v1 Lease)", leaseLockLeases)
	}
	if o.ResourceName == "" {
		problem("leader-elect-resource-name", "", "must not be empty: name the Lease, e.g. %s", DefaultLeaderElectionLease)
	} else if msgs := validation.IsDNS1123Subdomain(o.ResourceName); len(msgs) > 0 {
		problem("leader-elect-resource-name", o.ResourceName, "is not a valid Lease name: %s", strings.Join(msgs, "; "))
	}
	if o.ResourceNamespace == "" {
		problem("leader-elect-resource-namespace", "", "must not be empty: name the Lease's namespace, e.g. kube-system")
	} else if msgs := validation.IsDNS1123Label(o.ResourceNamespace); len(msgs) > 0 {
		problem("leader-elect-resource-namespace", o.ResourceNamespace, "is not a valid namespace name: %s", strings.Join(msgs, "; "))
	}
	return errs
}
