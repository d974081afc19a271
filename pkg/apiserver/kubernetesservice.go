package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net"

	utilnet "k8s.io/utils/net"

	"github.com/apictl/apictl/pkg/controllers/kubernetesservice"
	"github.com/apictl/apictl/pkg/routes"
)

// addKubernetesService keeps the default/kubernetes Service on every replica, with kube-apiserver's
// hooks: "bootstrap-controller" starts it once the server is ready, and
// "stop-kubernetes-service-controller" takes this replica's address out of its endpoints when
// shutdown begins. Each replica's lease is a key with a TTL in raw, as kube's /masterleases/.
// ready is called once the hooks run, and closes when the server is ready.
func (a *assembly) addKubernetesService() error {
	s, cfg, o, cl, raw, bg, ready := a.server, a.cfg, a.o, a.cl, a.st.store, &a.bg, a.ready
	cidrs := o.Services.ServiceCIDRs()
	if !servesV1(cfg.API, routes.GroupCore, "services") || cfg.SecureServing == nil || len(cidrs) == 0 {
		return nil
	}
	serviceIP, err := utilnet.GetIndexedIP(cidrs[0], 1)
	if err != nil {
		return fmt.Errorf("choosing the kubernetes Service's IP in --service-cluster-ip-range %s: %w", cidrs[0], err)
	}
	var leases kubernetesservice.Leases
	if servesV1(cfg.API, routes.GroupCore, "endpoints") && servesV1(cfg.API, "discovery.k8s.io", "endpointslices") {
		leases = kubernetesservice.StoreLeases{Store: raw, TTL: kubernetesservice.DefaultLeaseTTL}
	}
	c, err := kubernetesservice.New(kubernetesservice.Config{
		Client: cl.kube,
		Leases: leases,
		// As kube-apiserver advertises itself: --advertise-address, else the default interface's
		// address.
		PublicIP:          net.ParseIP(peerHost(o.Generic.AdvertiseAddress)),
		ServiceIP:         serviceIP,
		PublicServicePort: cfg.SecureServing.Listener.Addr().(*net.TCPAddr).Port,
		Logger:            cfg.Logger.With("component", "kubernetes-service"),
	})
	if err != nil {
		return err
	}
	return errors.Join(
		s.AddPostStartHook("bootstrap-controller", func(ctx context.Context) error {
			bg.goRun(func() { c.Run(ctx, ready()) })
			return nil
		}),
		s.AddPreShutdownHook("stop-kubernetes-service-controller", func(ctx context.Context) error {
			if err := c.Stop(ctx); err != nil {
				cfg.Logger.Warn("removing this server from the kubernetes Service's endpoints", "err", err)
			}
			return nil
		}),
	)
}
