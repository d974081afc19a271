package flags

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/apictl/apictl/pkg/features"
)

// DefaultDataDir is where `apictl serve` keeps etcd's data and its PKI unless told otherwise. It is
// relative, like etcd's default.etcd, so a first run in a checkout needs no setup and no privileges.
const DefaultDataDir = "apictl.local"

// GenericOptions are the server-wide settings: addresses, limits, timeouts and shutdown.
type GenericOptions struct {
	// AdvertiseAddress is the IP address clients and other members are told to reach this server at.
	// Completed from the secure bind address when that is specific, else left to the server.
	AdvertiseAddress string
	// ExternalHostname is the host name used in URLs the server generates. Completed to the advertise
	// address, else the machine's host name.
	ExternalHostname string
	// CORSAllowedOrigins are regular expressions matched against the Origin header; empty disables CORS.
	CORSAllowedOrigins []string
	// MaxRequestsInFlight bounds concurrent non-mutating requests (0: no limit).
	MaxRequestsInFlight int
	// MaxMutatingRequestsInFlight bounds concurrent mutating requests (0: no limit).
	MaxMutatingRequestsInFlight int
	// RequestTimeout bounds a non-long-running request; ?timeout= may shorten it.
	RequestTimeout time.Duration
	// MinRequestTimeout (seconds) is the least a watch lasts; each watch picks a random timeout in
	// [MinRequestTimeout, 2*MinRequestTimeout] so that reconnects spread out.
	MinRequestTimeout int
	// MaxRequestBodyBytes bounds a request body; larger bodies get 413 (0: no limit).
	MaxRequestBodyBytes int64
	// MemoryBudget is the heap the server keeps to, as a quantity ("2Gi"); empty derives it from
	// the machine's memory, "0" turns it off. Complete resolves it into MemoryBudgetBytes.
	MemoryBudget      string
	MemoryBudgetBytes int64
	// ShutdownDelayDuration keeps serving after a termination signal, with /readyz failing, so that
	// load balancers notice before the listeners close.
	ShutdownDelayDuration time.Duration
	// ShutdownTimeout bounds how long in-flight requests may take to drain once listeners close.
	ShutdownTimeout time.Duration
	// LivezGracePeriod is how long start-up checks may fail before /livez reports them.
	LivezGracePeriod time.Duration
	// StorageInitializationTimeout bounds how long /readyz waits for the watch caches of the built-in
	// resources to fill, as kube's storage-readiness hook does; a cache still filling after it serves
	// what etcd can answer a page at a time and 429 for the rest until it is ready.
	StorageInitializationTimeout time.Duration
	// EventTTL is how long Events are kept.
	EventTTL time.Duration
	// FeatureGates are raw Name=bool settings; features.Parse resolves them.
	FeatureGates map[string]string
	// DataDir holds the embedded etcd's data and the default PKI directory.
	DataDir string
}

// NewGenericOptions returns the defaults of kube-apiserver, with apictl's shutdown timeout and data dir.
func NewGenericOptions() *GenericOptions {
	return &GenericOptions{
		MaxRequestsInFlight:          400,
		MaxMutatingRequestsInFlight:  200,
		RequestTimeout:               time.Minute,
		MinRequestTimeout:            1800,
		StorageInitializationTimeout: time.Minute,
		MaxRequestBodyBytes:          3 * 1024 * 1024,
		ShutdownTimeout:              60 * time.Second,
		EventTTL:                     time.Hour,
		DataDir:                      DefaultDataDir,
	}
}

// AddFlags registers the generic flags with the current values as defaults.
func (o *GenericOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.AdvertiseAddress, "advertise-address", o.AdvertiseAddress,
		"The IP address on which to advertise the apiserver to clients. It must be reachable by them. "+
			"If blank, the --bind-address is used when it names one address.")
	fs.StringVar(&o.ExternalHostname, "external-hostname", o.ExternalHostname,
		"The hostname to use when generating externalized URLs for this server. If blank, the advertise address, else the machine's host name.")
	fs.StringSliceVar(&o.CORSAllowedOrigins, "cors-allowed-origins", o.CORSAllowedOrigins,
		"List of allowed origins for CORS, comma separated. An allowed origin is a regular expression; "+
			"anchor it (^https://example\\.com$) so that it cannot match more than you mean. If empty, CORS is not enabled.")
	fs.IntVar(&o.MaxRequestsInFlight, "max-requests-inflight", o.MaxRequestsInFlight,
		"The maximum number of non-mutating requests in flight at a given time. When the server exceeds this, it rejects requests with 429. Zero for no limit.")
	fs.IntVar(&o.MaxMutatingRequestsInFlight, "max-mutating-requests-inflight", o.MaxMutatingRequestsInFlight,
		"The maximum number of mutating requests in flight at a given time. When the server exceeds this, it rejects requests with 429. Zero for no limit.")
	fs.DurationVar(&o.RequestTimeout, "request-timeout", o.RequestTimeout,
		"The duration a handler must keep a request open before timing it out. This is the default for non-long-running requests; ?timeout= may shorten it.")
	fs.IntVar(&o.MinRequestTimeout, "min-request-timeout", o.MinRequestTimeout,
		"The minimum number of seconds a handler must keep a watch open before timing it out. Each watch picks a random timeout between this and twice this.")
	fs.DurationVar(&o.StorageInitializationTimeout, "storage-initialization-timeout", o.StorageInitializationTimeout,
		"Maximum amount of time to wait for storage initialization before declaring apiserver ready. A resource whose watch cache is still filling then answers gets and paged lists from etcd, and 429 to watches and other lists until it is ready.")
	fs.Int64Var(&o.MaxRequestBodyBytes, "max-request-body-bytes", o.MaxRequestBodyBytes,
		"The largest request body the server accepts, in bytes; larger bodies get 413. Zero for no limit.")
	fs.StringVar(&o.MemoryBudget, "memory-budget", o.MemoryBudget,
		"The heap the server keeps to, as a quantity such as 2Gi. A new LIST waits for its turn, then gets 429 with Retry-After, "+
			"while the LISTs running and the live heap leave no room for it, and Go's collector works to stay under it (unless GOMEMLIMIT is set). "+
			"If empty, three quarters of the machine's memory or of its cgroup's limit, whichever is smaller. 0 for no budget.")
	fs.DurationVar(&o.ShutdownDelayDuration, "shutdown-delay-duration", o.ShutdownDelayDuration,
		"Time to delay the termination. During that time the server keeps serving requests normally while /readyz fails, so that load balancers stop sending traffic before the listeners close.")
	fs.DurationVar(&o.ShutdownTimeout, "shutdown-timeout", o.ShutdownTimeout,
		"How long in-flight requests may take to finish once the listeners close during shutdown.")
	fs.DurationVar(&o.LivezGracePeriod, "livez-grace-period", o.LivezGracePeriod,
		"The maximum time the server may take to complete its start-up sequence and become live. From start to this time /livez assumes unfinished post-start hooks will finish.")
	fs.DurationVar(&o.EventTTL, "event-ttl", o.EventTTL, "Amount of time to retain events.")
	fs.Var(newMapStringString(&o.FeatureGates), "feature-gates",
		"A set of key=value pairs that describe feature gates for alpha/experimental features. Options are:\n"+
			strings.Join(features.Help(), "\n"))
	fs.StringVar(&o.DataDir, "data-dir", o.DataDir,
		"Directory for the embedded etcd's data (<data-dir>/etcd) and the default certificate directory (<data-dir>/pki). Created if missing.")
}

// Complete makes the data dir absolute, so that paths derived from it do not depend on the working
// directory of whoever reads them later, and fills in the external host name.
func (o *GenericOptions) Complete() error {
	if o.DataDir != "" {
		abs, err := filepath.Abs(o.DataDir)
		if err != nil {
			return fmt.Errorf("resolving --data-dir %q: %w", o.DataDir, err)
		}
		o.DataDir = abs
	}
	switch q, err := resource.ParseQuantity(o.MemoryBudget); {
	case o.MemoryBudget == "":
		o.MemoryBudgetBytes = defaultMemoryBudget()
	case err == nil:
		o.MemoryBudgetBytes = q.Value()
	}
	if o.ExternalHostname == "" {
		if o.AdvertiseAddress != "" {
			o.ExternalHostname = o.AdvertiseAddress
		} else if host, err := os.Hostname(); err == nil {
			o.ExternalHostname = host
		}
	}
	return nil
}

// Validate reports every problem with the generic settings.
func (o *GenericOptions) Validate() []error {
	const s = SectionGeneric
	var errs problemList
	errs.add(checkIP(s, "advertise-address", o.AdvertiseAddress))
	if h := o.ExternalHostname; h != "" && validation.IsDNS1123Subdomain(strings.ToLower(h)) != nil && net.ParseIP(h) == nil {
		errs.add(problemf(s, "external-hostname", h, "is neither a DNS name nor an IP address: use a name like api.example.com"))
	}
	for _, origin := range o.CORSAllowedOrigins {
		if strings.TrimSpace(origin) == "" {
			errs.add(problemf(s, "cors-allowed-origins", "", "has an empty entry: remove the stray comma or give a regular expression such as ^https://example\\.com$"))
			continue
		}
		if _, err := regexp.Compile(origin); err != nil {
			errs.add(problemf(s, "cors-allowed-origins", origin, "is not a valid regular expression: %v", err))
		}
	}
	errs.add(checkNotNegativeInt(s, "max-requests-inflight", int64(o.MaxRequestsInFlight), "no limit"))
	errs.add(checkNotNegativeInt(s, "max-mutating-requests-inflight", int64(o.MaxMutatingRequestsInFlight), "no limit"))
	errs.add(checkPositive(s, "request-timeout", o.RequestTimeout))
	if o.MinRequestTimeout < 0 {
		errs.add(problemf(s, "min-request-timeout", strconv.Itoa(o.MinRequestTimeout), "can not be negative: give a number of seconds such as 1800"))
	}
	errs.add(checkNotNegative(s, "storage-initialization-timeout", o.StorageInitializationTimeout))
	errs.add(checkNotNegativeInt(s, "max-request-body-bytes", o.MaxRequestBodyBytes, "no limit"))
	errs.add(checkMemoryBudget(s, o.MemoryBudget))
	errs.add(checkNotNegative(s, "shutdown-delay-duration", o.ShutdownDelayDuration))
	errs.add(checkNotNegative(s, "shutdown-timeout", o.ShutdownTimeout))
	errs.add(checkNotNegative(s, "livez-grace-period", o.LivezGracePeriod))
	errs.add(checkPositive(s, "event-ttl", o.EventTTL))
	if _, gateErrs := features.Parse(o.FeatureGates); len(gateErrs) > 0 {
		for _, err := range gateErrs {
			errs.add(problemf(s, "feature-gates", newMapStringString(&o.FeatureGates).String(), "%v", err))
		}
	}
	if o.DataDir == "" {
		errs.add(problemf(s, "data-dir", "", "must not be empty: give a directory such as %s", DefaultDataDir))
	} else if info, err := os.Stat(o.DataDir); err == nil && !info.IsDir() {
		errs.add(problemf(s, "data-dir", o.DataDir, "is a file, not a directory: give a directory path"))
	}
	return errs
}
