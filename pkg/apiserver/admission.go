package apiserver

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
	webhookutil "k8s.io/apiserver/pkg/util/webhook"

	"github.com/apictl/apictl/pkg/admission"
	"github.com/apictl/apictl/pkg/features"
	"github.com/apictl/apictl/pkg/kinds/core/resourcequotas"
	"github.com/apictl/apictl/pkg/routes"
	"github.com/apictl/apictl/pkg/storage/cacher"
)

// addAdmission puts kube's admission plugins in front of the handlers' writes: the webhook plugins
// when the API serves webhook configurations, the policy plugins when it serves policies. The chain
// is built by a post-start hook (named as kube's) once the watch caches are ready; /readyz waits for
// the hook, and writes before it are not admitted. Each plugin (CEL environments, policy sources,
// the informers it reads its configurations from) is built only by the first write that a
// configuration of it exists for: see admission.New.
func (a *assembly) addAdmission() error {
	s, cfg, rest, cl, caches := a.server, a.cfg, a.rest, a.cl, a.caches
	webhooks := admissionServed(cfg.API, "mutatingwebhookconfigurations", "validatingwebhookconfigurations")
	policies := admissionServed(cfg.API, "validatingadmissionpolicies", "validatingadmissionpolicybindings",
		"mutatingadmissionpolicies", "mutatingadmissionpolicybindings")
	quotas := quotaServed(cfg.API)
	if !webhooks && !policies && !quotas {
		return nil
	}
	// Asked for now, before the start-informers hook starts the factory.
	res, err := cl.serviceResolver()
	if err != nil {
		return fmt.Errorf("building the webhooks' service resolver: %w", err)
	}
	var sr webhookutil.ServiceResolver
	if res != nil {
		sr = res
	}
	return s.AddPostStartHook("start-kube-apiserver-admission-initializer", func(ctx context.Context) error {
		// The informers list and watch through the handlers: not before the watch caches serve.
		if err := caches.waitReady(ctx); err != nil {
			return err
		}
		fg, err := admission.FeatureGate(featureSettings(cfg.FeatureGates))
		if err != nil {
			return err
		}
		c := admission.Config{
			Client: cl.kube, Dynamic: cl.dynamic, Informers: cl.informers, RESTMapper: cl.mapper,
			Authorizer:      admission.KubeAuthorizer(cfg.Authorization),
			ServiceResolver: sr, FeatureGates: fg, Drained: ctx.Done(), WithoutWebhooks: !webhooks,
			Configured: cachedConfigured(caches),
		}
		if policies {
			c.Policies = admission.NewPolicyPlugins
		}
		if quotas {
			c.Quota = resourcequotas.Configuration(func(gvr schema.GroupVersionResource) bool {
				_, ok := cfg.API.Resource(gvr.Group, gvr.Version, gvr.Resource)
				return ok
			}, nil)
		}
		chain, err := admission.New(c)
		if err != nil {
			return err
		}
		rest.SetAdmission(chain)
		return nil
	})
}

// cachedConfigured tells from the server's watch caches whether objects of an
// admissionregistration.k8s.io resource, or resource quotas, exist: the plugins' informers (and the
// namespaces') then start with the first plugin a configuration calls for, not with the server. A
// resource without a cache counts as configured, so that its plugin is called and decides.
func cachedConfigured(caches *watchCaches) func(resource string) func() bool {
	return func(resource string) func() bool {
		gr := schema.GroupResource{Group: routes.GroupAdmissionRegistration, Resource: resource}
		if resource == "resourcequotas" {
			gr.Group = routes.GroupCore
		}
		c, ok := caches.byResource[gr].(*cacher.Cacher)
		if !ok {
			return func() bool { return true }
		}
		return func() bool {
			st := c.Stats()
			return !st.Ready || st.Objects > 0
		}
	}
}

// quotaServed reports whether the API serves core v1 resourcequotas: kube's ResourceQuota plugin is
// on by default, so it runs whenever there can be quotas.
func quotaServed(api *routes.API) bool {
	_, ok := api.Resource(routes.GroupCore, "v1", "resourcequotas")
	return ok
}

// admissionServed reports whether the API serves all these admissionregistration.k8s.io/v1 resources.
func admissionServed(api *routes.API, resources ...string) bool {
	for _, r := range resources {
		if _, ok := api.Resource(routes.GroupAdmissionRegistration, "v1", r); !ok {
			return false
		}
	}
	return true
}

// featureSettings are apictl's gates by name, for the gates kube's plugins inspect.
func featureSettings(g features.Gates) map[string]bool {
	out := map[string]bool{}
	for name := range features.Known() {
		out[name] = g.Enabled(name)
	}
	return out
}
