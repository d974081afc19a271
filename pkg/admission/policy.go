package admission

import (
	"errors"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/features"
	"k8s.io/client-go/tools/cache"
	"k8s.io/component-base/compatibility"
)

// kubeVersion is the kube-apiserver release whose behaviour the plugins give.
const kubeVersion = "1.37.2"

// NewPolicyPlugins gives kube's own MutatingAdmissionPolicy and ValidatingAdmissionPolicy plugins
// (k8s.io/apiserver/pkg/admission/plugin/policy/...), for Config.Policies: their compilers,
// matchers, CEL environments and cost limits are kube's. Each is built by the first request that
// finds it configured, and initialized then as kube-apiserver's initializers do (server identity,
// clients, informers, authorizer, feature gates, REST mapper, excluded resources) and checked; until
// their informers have synced a request they must judge waits, then is refused with kube's "not yet
// ready to handle request". Each plugin counts as configured while a binding of its kind exists (or
// the bindings are not listed yet); MutatingAdmissionPolicy also needs its feature gate, on by
// default since kube 1.36. The informers of the bindings are asked for now, so that the caller's
// Start runs them.
func NewPolicyPlugins(c Config) (mutatingPlugins, validatingPlugins []Plugin, err error) {
	if c.Client == nil || c.Dynamic == nil || c.Informers == nil || c.RESTMapper == nil || c.Authorizer == nil || c.Drained == nil {
		return nil, nil, errors.New("the policy plugins need a client, a dynamic client, an informer factory, a REST mapper, an authorizer and a drained channel")
	}
	gates := c.FeatureGates
	if gates == nil {
		if gates, err = FeatureGate(nil); err != nil {
			return nil, nil, err
		}
	}
	c.FeatureGates = gates
	configured := c.Configured
	if configured == nil {
		configured = informerConfigured(c.Informers)
		c.Informers.Core().V1().Namespaces().Informer()
	}
	// A plugin acts only while a binding of its kind exists; the informers of policies (and
	// bindings, with a Configured source) start when it is built.
	v1 := c.Informers.Admissionregistration().V1()
	mapper := resetting(c.RESTMapper)
	mutatingOn := gates.Enabled(features.MutatingAdmissionPolicy)
	mutatingBindings := configured("mutatingadmissionpolicybindings")
	mutatingPlugins = []Plugin{{
		Name: mutating.PluginName,
		Interface: lazyMutating{newLazy(mutating.PluginName, func() (admission.Interface, error) {
			m, err := mutating.NewPlugin(nil)
			if err != nil {
				return nil, err
			}
			if err := initPolicy(c, mapper, m, v1.MutatingAdmissionPolicies().Informer(), v1.MutatingAdmissionPolicyBindings().Informer()); err != nil {
				return nil, err
			}
			return mutatingPolicy{m}, nil
		})},
		// With its gate off the plugin admits everything without looking: it need not be called.
		Configured: func() bool { return mutatingOn && mutatingBindings() },
	}}
	validatingPlugins = []Plugin{{
		Name: validating.PluginName,
		Interface: lazyValidating{newLazy(validating.PluginName, func() (admission.Interface, error) {
			v, err := validating.NewPlugin(nil)
			if err != nil {
				return nil, err
			}
			if err := initPolicy(c, mapper, v, v1.ValidatingAdmissionPolicies().Informer(), v1.ValidatingAdmissionPolicyBindings().Informer()); err != nil {
				return nil, err
			}
			return v, nil
		})},
		Configured: configured("validatingadmissionpolicybindings"),
	}}
	return mutatingPlugins, validatingPlugins, nil
}

// initPolicy initializes a policy plugin as kube-apiserver does and checks it, which starts its
// source and dispatcher until c.Drained closes; then it starts the informers the plugin asked for
// that are not running yet and waits for those it reads (policies, bindings, namespaces).
func initPolicy(c Config, mapper meta.RESTMapper, p admission.Interface, policies, bindings cache.SharedIndexInformer) error {
	admission.PluginInitializers{
		initializer.NewAPIServerIDInitializer(c.APIServerID),
		initializer.New(c.Client, c.Dynamic, c.Informers, c.Authorizer, c.FeatureGates,
			compatibility.NewEffectiveVersionFromString(kubeVersion, "", ""), c.Drained, mapper),
		excludedInitializer{},
	}.Initialize(p)
	if err := admission.ValidateInitialization(p); err != nil {
		return err
	}
	return startInformers(c, policies, bindings, c.Informers.Core().V1().Namespaces().Informer())
}

// resetting wraps m in a resettingMapper when it can be reset.
func resetting(m meta.RESTMapper) meta.RESTMapper {
	if r, ok := m.(meta.ResettableRESTMapper); ok {
		return newResettingMapper(r, mapperResetInterval)
	}
	return m
}

// excludedInitializer gives plugins kube-apiserver's excluded resources: reviews that are never
// stored, whose interception could lock everyone out
// (k8s.io/kubernetes/pkg/kubeapiserver/admission/exclusion). The policy plugins exclude their own
// kinds themselves.
type excludedInitializer struct{}

// Initialize hands p a fresh copy of the list.
func (excludedInitializer) Initialize(p admission.Interface) {
	if wants, ok := p.(initializer.WantsExcludedAdmissionResources); ok {
		wants.SetExcludedAdmissionResources([]schema.GroupResource{
			{Group: "authentication.k8s.io", Resource: "selfsubjectreviews"},
			{Group: "authentication.k8s.io", Resource: "tokenreviews"},
			{Group: "authorization.k8s.io", Resource: "localsubjectaccessreviews"},
			{Group: "authorization.k8s.io", Resource: "selfsubjectaccessreviews"},
			{Group: "authorization.k8s.io", Resource: "selfsubjectrulesreviews"},
			{Group: "authorization.k8s.io", Resource: "subjectaccessreviews"},
		})
	}
}
