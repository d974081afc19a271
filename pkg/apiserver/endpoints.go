package apiserver

import (
	"log/slog"

	"github.com/apictl/apictl/pkg/controllers/endpoints"
	"github.com/apictl/apictl/pkg/routes"
)

// addEndpointControllers registers kube-controller-manager's endpoints, endpointslice and
// endpointslice-mirroring controllers, which run once per cluster. Services, Endpoints and
// EndpointSlices are served by pkg/registry rather than described in pkg/kinds, so they are
// registered here, for what the API serves.
func (a *assembly) addEndpointControllers() {
	cfg, cl, ctrls := a.cfg, a.cl, &a.ctrls
	if !servesV1(cfg.API, routes.GroupCore, "services") || !servesV1(cfg.API, routes.GroupCore, "endpoints") {
		return
	}
	log := func(name string) *slog.Logger { return cfg.Logger.With("controller", name) }
	ctrls.add("endpoints-controller", endpoints.NewEndpointsController(cl.kube, cl.informers, log("endpoints-controller")).Run)
	if !servesV1(cfg.API, "discovery.k8s.io", "endpointslices") {
		return
	}
	ctrls.add("endpointslice-controller", endpoints.NewSliceController(cl.kube, cl.informers, log("endpointslice-controller")).Run)
	ctrls.add("endpointslice-mirroring-controller",
		endpoints.NewMirroringController(cl.kube, cl.informers, log("endpointslice-mirroring-controller")).Run)
}
