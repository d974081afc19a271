package apiserver

import (
	"context"
	"fmt"
	"log/slog"
	"maps"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apictl/apictl/pkg/allocator"
	"github.com/apictl/apictl/pkg/flags"
	"github.com/apictl/apictl/pkg/kinds/networking/servicecidrs"
	"github.com/apictl/apictl/pkg/storage"
)

// withServiceAllocation returns the handlers' stores with the services' one wrapped by the cluster
// IP and node port allocator of --service-cluster-ip-range and --service-node-port-range, which keeps
// its reservations in raw (quorum reads, shared by every replica on the etcd). stores itself is left
// as it is: its values are the watch caches. Without a services resource (turned off in
// --runtime-config) stores are returned unchanged. Cluster IPs reserved before they were IPAddresses
// are migrated first, before anything is allocated.
func withServiceAllocation(ctx context.Context, o *flags.ServerOptions, stores map[schema.GroupResource]storage.Store,
	raw storage.Store, logger *slog.Logger) (map[schema.GroupResource]storage.Store, error) {
	gr := corev1.Resource("services")
	services, ok := stores[gr]
	if !ok {
		return stores, nil
	}
	alloc, err := allocator.New(raw, allocator.Config{ServiceCIDRs: o.Services.ServiceCIDRs(), NodePorts: o.Services.NodePortRange})
	if err != nil {
		return nil, fmt.Errorf("setting up the service allocator: %w", err)
	}
	migrated, err := alloc.Migrate(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrating the cluster IPs to IPAddresses: %w", err)
	}
	if migrated.Moved > 0 || migrated.Made > 0 {
		logger.Info("migrated the cluster IPs to IPAddresses", "moved", migrated.Moved, "made", migrated.Made)
	}
	out := maps.Clone(stores)
	out[gr] = alloc.Wrap(services, logger)
	return out, nil
}

// addDefaultServiceCIDR keeps the default ServiceCIDR, made from --service-cluster-ip-range, on
// every replica as kube-apiserver does, while the server runs; not when ServiceCIDRs are not served.
func (a *assembly) addDefaultServiceCIDR() error {
	s, cfg, o, cl, bg := a.server, a.cfg, a.o, a.cl, &a.bg
	if _, ok := cfg.API.Resource(networkingv1.GroupName, "v1", "servicecidrs"); !ok {
		return nil
	}
	var cidrs []string
	for _, c := range o.Services.ServiceCIDRs() {
		cidrs = append(cidrs, c.String())
	}
	c := &servicecidrs.DefaultController{Client: cl.kube, CIDRs: cidrs, Logger: cfg.Logger.With("controller", "kubernetes-service-cidr-controller")}
	return s.AddPostStartHook("start-kubernetes-service-cidr-controller", func(ctx context.Context) error {
		bg.goRun(func() { c.Run(ctx) })
		return nil
	})
}
