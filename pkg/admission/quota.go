package admission

import (
	"k8s.io/apiserver/pkg/admission"
	genericinitializer "k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/apiserver/pkg/admission/plugin/resourcequota"
	quota "k8s.io/apiserver/pkg/quota/v1"
	"k8s.io/component-base/compatibility"
)

// quotaWorkers is the number of quota evaluations that run at once, as kube-apiserver registers
// the plugin (resourcequota.Register).
const quotaWorkers = 5

// quotaPlugin is kube's ResourceQuota plugin, the last validating plugin as in kube's order. It is
// called only while some ResourceQuota exists (Config.Configured("resourcequotas")): without one it
// admits everything anyway, after looking for quotas.
func quotaPlugin(c Config) Plugin {
	return Plugin{Name: resourcequota.PluginName, Configured: c.Configured("resourcequotas"),
		Interface: lazyValidating{newLazy(resourcequota.PluginName, func() (admission.Interface, error) {
			p, err := resourcequota.NewResourceQuota(nil, quotaWorkers)
			if err != nil {
				return nil, err
			}
			admission.PluginInitializers{
				genericinitializer.New(c.Client, c.Dynamic, c.Informers, c.Authorizer, c.FeatureGates,
					compatibility.NewEffectiveVersionFromString(kubeVersion, "", ""), c.Drained, c.RESTMapper),
				quotaInitializer{c.Quota},
			}.Initialize(p)
			if err := admission.ValidateInitialization(p); err != nil {
				return nil, err
			}
			if err := startInformers(c, c.Informers.Core().V1().ResourceQuotas().Informer()); err != nil {
				return nil, err
			}
			return p, nil
		})}}
}

// quotaInitializer hands the plugin its evaluators, as kube-apiserver's admission initializer
// does (k8s.io/kubernetes pkg/controlplane/apiserver/admission).
type quotaInitializer struct{ c quota.Configuration }

func (q quotaInitializer) Initialize(p admission.Interface) {
	if wants, ok := p.(genericinitializer.WantsQuotaConfiguration); ok {
		wants.SetQuotaConfiguration(q.c)
	}
}
