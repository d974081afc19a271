package apiserver

import (
	"context"
	"fmt"

	webhookutil "k8s.io/apiserver/pkg/util/webhook"
	"k8s.io/client-go/tools/cache"

	"github.com/apictl/apictl/pkg/admission"
	"github.com/apictl/apictl/pkg/features"
	"github.com/apictl/apictl/pkg/routes"
	"github.com/apictl/apictl/pkg/serve"
	"github.com/apictl/apictl/pkg/serve/handlers"
)

// addAdmission puts kube's admission plugins in front of the handlers' writes: the webhook plugins
// when the API serves webhook configurations, the policy plugins when it serves policies. The chain
// reads its configurations through the in-process informers, so it is built by a post-start hook
// (named as kube's) that waits for them; /readyz waits for the hook, and writes before it are not
// admitted.
func addAdmission(s *serve.Server, cfg *serve.Config, rest *handlers.API, cl *clients, caches *watchCaches) error {
	webhooks := admissionServed(cfg.API, "mutatingwebhookconfigurations", "validatingwebhookconfigurations")
	policies := admissionServed(cfg.API, "validatingadmissionpolicies", "validatingadmissionpolicybindings",
		"mutatingadmissionpolicies", "mutatingadmissionpolicybindings")
	if !webhooks && !policies {
		return nil
	}
	// Asked for now, before the start-informers hook starts the factory.
	res, err := newServiceResolver(cfg.API, cl)
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
		}
		if policies {
			c.Policies = admission.NewPolicyPlugins
		}
		chain, err := admission.New(c)
		if err != nil {
			return err
		}
		// The factory may have started already: Start only runs the informers the plugins added.
		// Only the plugins' own informers are waited for; others' belong to their hooks.
		synced := admissionInformers(cl, webhooks, policies) // asked for before Start, so that it runs them
		cl.informers.Start(ctx.Done())
		if !cache.WaitForCacheSync(ctx.Done(), synced...) {
			return fmt.Errorf("the informers of admission did not sync: %w", ctx.Err())
		}
		rest.SetAdmission(chain)
		return nil
	})
}

// admissionInformers are the synced tests of the informers the plugins read their configurations
// from (a policy's params are read by the plugin, which waits for them itself).
func admissionInformers(cl *clients, webhooks, policies bool) []cache.InformerSynced {
	v1 := cl.informers.Admissionregistration().V1()
	synced := []cache.InformerSynced{cl.informers.Core().V1().Namespaces().Informer().HasSynced}
	if webhooks {
		synced = append(synced, v1.MutatingWebhookConfigurations().Informer().HasSynced,
			v1.ValidatingWebhookConfigurations().Informer().HasSynced)
	}
	if policies {
		synced = append(synced, v1.ValidatingAdmissionPolicies().Informer().HasSynced,
			v1.ValidatingAdmissionPolicyBindings().Informer().HasSynced,
			v1.MutatingAdmissionPolicies().Informer().HasSynced,
			v1.MutatingAdmissionPolicyBindings().Informer().HasSynced)
	}
	return synced
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
