package apiserver

import (
	"fmt"
	"log/slog"
	"maps"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apictl/apictl/pkg/allocator"
	"github.com/apictl/apictl/pkg/flags"
	"github.com/apictl/apictl/pkg/storage"
)

// withServiceAllocation returns the handlers' stores with the services' one wrapped by the cluster
// IP and node port allocator of --service-cluster-ip-range and --service-node-port-range, which keeps
// its reservations in raw (quorum reads, shared by every replica on the etcd). stores itself is left
// as it is: its values are the watch caches. Without a services resource (turned off in
// --runtime-config) stores are returned unchanged.
func withServiceAllocation(o *flags.ServerOptions, stores map[schema.GroupResource]storage.Store, raw storage.Store,
	logger *slog.Logger) (map[schema.GroupResource]storage.Store, error) {
	gr := corev1.Resource("services")
	services, ok := stores[gr]
	if !ok {
		return stores, nil
	}
	alloc, err := allocator.New(raw, allocator.Config{ServiceCIDRs: o.Services.ServiceCIDRs(), NodePorts: o.Services.NodePortRange})
	if err != nil {
		return nil, fmt.Errorf("setting up the service allocator: %w", err)
	}
	out := maps.Clone(stores)
	out[gr] = alloc.Wrap(services, logger)
	return out, nil
}
