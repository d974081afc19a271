//lint:file-ignore SA1019 core v1 Endpoints are deprecated in kube, which still serves them and keeps them with its controllers: so does apictl.

// Ported from k8s.io/kubernetes v1.37.2 pkg/controlplane/controller/kubernetesservice/controller.go,
// pkg/controlplane/reconcilers/lease.go (the lease endpoint reconciler, kube-apiserver's default) and
// pkg/controlplane/reconcilers/endpointsadapter.go.

// Package kubernetesservice keeps the default/kubernetes Service, through which clients inside the
// cluster reach the API server, as kube-apiserver does: every replica creates the Service if it is
// missing, renews a lease on its own address, and writes the Endpoints and EndpointSlice
// "kubernetes" with the address of every replica whose lease is live. It runs on every replica, not
// under the controllers' Lease.
package kubernetesservice

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes"
	utilnet "k8s.io/utils/net"

	"github.com/apictl/apictl/pkg/controllers/endpoints"
	"github.com/apictl/apictl/pkg/kinds/validation"
)

// Name is the Service's, its Endpoints' and its EndpointSlice's name, in the default namespace.
const Name = "kubernetes"

// kube-apiserver's defaults (pkg/controlplane/instance.go).
const (
	// DefaultInterval is how often a replica renews its lease and reconciles the Endpoints.
	DefaultInterval = 10 * time.Second
	// DefaultLeaseTTL is how long a replica's lease outlives its last renewal.
	DefaultLeaseTTL = 15 * time.Second
	// ServicePort is the Service's port.
	ServicePort = 443
)

// Leases are the live replicas' addresses (kube's reconcilers.Leases).
type Leases interface {
	List(ctx context.Context) ([]string, error)
	// Update adds or renews ip's lease.
	Update(ctx context.Context, ip string) error
	Remove(ctx context.Context, ip string) error
}

// Config is what the controller keeps.
type Config struct {
	Client kubernetes.Interface
	// Leases, when nil, writes no Endpoints: the Service alone is kept.
	Leases Leases
	// PublicIP is this replica's address (--advertise-address). kube refuses an address an Endpoints
	// may not hold (loopback, link-local, unspecified); here the Service is still kept, without
	// endpoints, as kube-apiserver keeps it with --endpoint-reconciler-type none.
	PublicIP net.IP
	// ServiceIP is the Service's cluster IP: the first address of --service-cluster-ip-range.
	ServiceIP net.IP
	// PublicServicePort is the port the Service's port targets: the secure port.
	PublicServicePort int
	// Interval is how often the controller reconciles; DefaultInterval when 0.
	Interval time.Duration
	Logger   *slog.Logger
}

// Controller keeps the Service and this replica's part of its endpoints.
type Controller struct {
	cfg Config
	// reconcile is false when PublicIP may not be an endpoint, or there are no Leases.
	reconcile bool

	// mu orders the reconciles of Run with the removal of Stop (kube's reconcilingLock); stopped,
	// under it, says Stop has begun and Run must not renew the lease again.
	mu      sync.Mutex
	stopped bool
}

// New checks cfg and returns a controller; the reasons it writes no endpoints are logged at Debug.
func New(cfg Config) (*Controller, error) {
	if cfg.Client == nil || cfg.ServiceIP == nil || cfg.Logger == nil {
		return nil, errors.New("the kubernetes Service controller needs a client, a service IP and a logger")
	}
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	c := &Controller{cfg: cfg, reconcile: cfg.Leases != nil}
	switch {
	case cfg.Leases == nil:
		cfg.Logger.Debug("the kubernetes Service gets no endpoints: the API does not serve Endpoints and EndpointSlices")
	case cfg.PublicIP == nil:
		c.reconcile = false
		cfg.Logger.Debug("the kubernetes Service gets no endpoints: this server has no address to advertise")
	default:
		if errs := validation.EndpointIP(cfg.PublicIP.String(), field.NewPath("advertise-address")); len(errs) > 0 {
			// kube-apiserver refuses to start with its default (lease) reconciler here; with a
			// loopback-only server being apictl's first use, it serves and says why the Service has
			// no endpoints.
			c.reconcile = false
			cfg.Logger.Debug("the kubernetes Service gets no endpoints: the advertise address may not be an endpoint; pass --advertise-address with an address clients reach",
				"err", errs.ToAggregate())
		}
	}
	return c, nil
}

// Run keeps the Service and the endpoints until ctx ends: once ready is closed (the server is
// ready, as kube waits for /readyz), at once and then every Interval. A replica that crashed left
// its lease behind; running again on the same address renews it.
func (c *Controller) Run(ctx context.Context, ready <-chan struct{}) {
	select {
	case <-ctx.Done():
		return
	case <-ready:
	}
	t := time.NewTicker(c.cfg.Interval)
	defer t.Stop()
	for {
		if err := c.Sync(ctx); err != nil && ctx.Err() == nil {
			c.cfg.Logger.Warn("keeping the kubernetes Service", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Sync creates the Service if it is missing, renews this replica's lease and reconciles the
// Endpoints and EndpointSlice (kube's UpdateKubernetesService).
func (c *Controller) Sync(ctx context.Context) error {
	if err := c.ensureService(ctx); err != nil {
		return err
	}
	if !c.reconcile {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return nil
	}
	// The lease first, whatever happens next, so that the other replicas list this one.
	if err := c.cfg.Leases.Update(ctx, c.cfg.PublicIP.String()); err != nil {
		return err
	}
	return c.reconcileEndpoints(ctx, false)
}

// Stop removes this replica's lease and address, so that clients stop being sent to it before its
// lease would expire; it gives up after two intervals (a lost etcd must not hold the shutdown).
func (c *Controller) Stop(ctx context.Context) error {
	if !c.reconcile {
		return nil
	}
	c.mu.Lock()
	c.stopped = true
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, 2*c.cfg.Interval)
	defer cancel()
	return c.remove(ctx)
}

func (c *Controller) remove(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.cfg.Leases.Remove(ctx, c.cfg.PublicIP.String()); err != nil {
		return err
	}
	return c.reconcileEndpoints(ctx, true)
}

// ensureService creates the Service if it does not exist; an existing one is left as it is, as kube
// does since 1.17.
func (c *Controller) ensureService(ctx context.Context) error {
	services := c.cfg.Client.CoreV1().Services(metav1.NamespaceDefault)
	if _, err := services.Get(ctx, Name, metav1.GetOptions{}); err == nil || !apierrors.IsNotFound(err) {
		return err
	}
	_, err := services.Create(ctx, Service(c.cfg.ServiceIP, c.cfg.PublicServicePort), metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the %s/%s Service: %w", metav1.NamespaceDefault, Name, err)
	}
	if err == nil {
		c.cfg.Logger.Debug("created the kubernetes Service", "clusterIP", c.cfg.ServiceIP.String(), "targetPort", c.cfg.PublicServicePort)
	}
	return nil
}

// Service is the default/kubernetes Service as kube-apiserver creates it.
func Service(clusterIP net.IP, targetPort int) *corev1.Service {
	singleStack := corev1.IPFamilyPolicySingleStack
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name:      Name,
			Namespace: metav1.NamespaceDefault,
			Labels:    map[string]string{"provider": "kubernetes", "component": "apiserver"},
		},
		Spec: corev1.ServiceSpec{
			Ports:           []corev1.ServicePort{{Name: "https", Protocol: corev1.ProtocolTCP, Port: ServicePort, TargetPort: intstr.FromInt32(int32(targetPort))}},
			ClusterIP:       clusterIP.String(),
			IPFamilyPolicy:  &singleStack,
			SessionAffinity: corev1.ServiceAffinityNone,
			Type:            corev1.ServiceTypeClusterIP,
		},
	}
}

// reconcileEndpoints makes the Endpoints list the leased addresses (kube's doReconcile); stopping
// says this replica is leaving, and may write an empty list as the last one out. Callers hold mu.
func (c *Controller) reconcileEndpoints(ctx context.Context, stopping bool) error {
	client := c.cfg.Client.CoreV1().Endpoints(metav1.NamespaceDefault)
	e, err := client.Get(ctx, Name, metav1.GetOptions{})
	create := false
	switch {
	case apierrors.IsNotFound(err):
		if stopping {
			return nil
		}
		create = true
		e = &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: Name, Namespace: metav1.NamespaceDefault}}
	case err != nil:
		return fmt.Errorf("reading the kubernetes Endpoints: %w", err)
	}
	ips, err := c.cfg.Leases.List(ctx)
	if err != nil {
		return err
	}
	// This replica has just renewed its own lease: none at all means storage is wrong, not that
	// every replica is gone.
	if !stopping && len(ips) == 0 {
		return errors.New("no API server addresses were listed in storage: refusing to erase all endpoints of the kubernetes Service")
	}
	ports := []corev1.EndpointPort{{Name: "https", Port: int32(c.cfg.PublicServicePort), Protocol: corev1.ProtocolTCP}}
	want := e.DeepCopy()
	// The mirroring controller leaves it alone: the slice is written here.
	if want.Labels == nil {
		want.Labels = map[string]string{}
	}
	want.Labels[discoveryv1.LabelSkipMirror] = "true"
	addrs := make([]corev1.EndpointAddress, len(ips))
	for i, ip := range ips {
		addrs[i] = corev1.EndpointAddress{IP: ip}
	}
	want.Subsets = endpoints.RepackSubsets([]corev1.EndpointSubset{{Addresses: addrs, Ports: ports}})
	if !create && equality.Semantic.DeepEqual(want.Labels, e.Labels) && sameSubsets(e.Subsets, want.Subsets) {
		return c.ensureSlice(ctx, e)
	}
	c.cfg.Logger.Debug("resetting the endpoints of the kubernetes Service", "addresses", ips)
	if create {
		e, err = client.Create(ctx, want, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil // the next round sees it
		}
	} else {
		e, err = client.Update(ctx, want, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("writing the kubernetes Endpoints: %w", err)
	}
	return c.ensureSlice(ctx, e)
}

// sameSubsets compares what reconcileEndpoints writes, ignoring the order of addresses another
// writer may have used.
func sameSubsets(have, want []corev1.EndpointSubset) bool {
	return equality.Semantic.DeepEqual(have, want) ||
		equality.Semantic.DeepEqual(endpoints.RepackSubsets(slices.Clone(have)), want)
}

// ensureSlice writes the EndpointSlice "kubernetes" from the Endpoints (kube's
// EnsureEndpointSliceFromEndpoints).
func (c *Controller) ensureSlice(ctx context.Context, e *corev1.Endpoints) error {
	client := c.cfg.Client.DiscoveryV1().EndpointSlices(metav1.NamespaceDefault)
	want := SliceFromEndpoints(e)
	have, err := client.Get(ctx, want.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		if _, err := client.Create(ctx, want, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating the kubernetes EndpointSlice: %w", err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("reading the kubernetes EndpointSlice: %w", err)
	case have.AddressType != want.AddressType:
		// An address type cannot change: the slice is made again.
		if err := client.Delete(ctx, want.Name, metav1.DeleteOptions{}); err != nil {
			return fmt.Errorf("replacing the kubernetes EndpointSlice: %w", err)
		}
		if _, err := client.Create(ctx, want, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("replacing the kubernetes EndpointSlice: %w", err)
		}
		return nil
	}
	if equality.Semantic.DeepEqual(have.Endpoints, want.Endpoints) && equality.Semantic.DeepEqual(have.Ports, want.Ports) &&
		equality.Semantic.DeepEqual(have.Labels, want.Labels) {
		return nil
	}
	want.ResourceVersion = have.ResourceVersion
	if _, err := client.Update(ctx, want, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("updating the kubernetes EndpointSlice: %w", err)
	}
	return nil
}

// SliceFromEndpoints is the EndpointSlice kube-apiserver writes beside its Endpoints: the same
// name, the service-name label, one endpoint per address.
func SliceFromEndpoints(e *corev1.Endpoints) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: e.Name, Namespace: e.Namespace, Labels: map[string]string{discoveryv1.LabelServiceName: e.Name}},
		AddressType: discoveryv1.AddressTypeIPv4,
	}
	if len(e.Subsets) == 0 {
		return s
	}
	subset := e.Subsets[0]
	for i := range subset.Ports {
		p := subset.Ports[i]
		s.Ports = append(s.Ports, discoveryv1.EndpointPort{Port: &p.Port, Name: &p.Name, Protocol: &p.Protocol})
	}
	all := append(slices.Clone(subset.Addresses), subset.NotReadyAddresses...)
	if len(all) > 0 && !slices.ContainsFunc(all, func(a corev1.EndpointAddress) bool { return !utilnet.IsIPv6String(a.IP) }) {
		s.AddressType = discoveryv1.AddressTypeIPv6
	}
	s.Endpoints = append(endpointsOf(subset.Addresses, s.AddressType, true), endpointsOf(subset.NotReadyAddresses, s.AddressType, false)...)
	return s
}

func endpointsOf(addrs []corev1.EndpointAddress, t discoveryv1.AddressType, ready bool) []discoveryv1.Endpoint {
	out := []discoveryv1.Endpoint{}
	for _, a := range addrs {
		if utilnet.IsIPv6String(a.IP) != (t == discoveryv1.AddressTypeIPv6) {
			continue
		}
		ep := discoveryv1.Endpoint{Addresses: []string{a.IP}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}, TargetRef: a.TargetRef}
		if a.NodeName != nil {
			ep.NodeName = a.NodeName
		}
		out = append(out, ep)
	}
	return out
}
