package admission

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/features"
	"k8s.io/component-base/compatibility"
)

// kubeVersion is the kube-apiserver release whose behaviour the plugins give.
const kubeVersion = "1.37.2"

// NewPolicyPlugins builds kube's own MutatingAdmissionPolicy and ValidatingAdmissionPolicy plugins
// (k8s.io/apiserver/pkg/admission/plugin/policy/...), for Config.Policies: their compilers,
// matchers, CEL environments and cost limits are kube's. It initializes them as kube-apiserver's
// initializers do (server identity, clients, informers, authorizer, feature gates, REST mapper,
// excluded resources) and checks them; they ask c.Informers for their informers now, and until
// those have synced a request they must judge waits, then is refused with kube's "not yet ready to
// handle request". Each plugin counts as configured while a binding of its kind exists (or the
// bindings are not listed yet); MutatingAdmissionPolicy also needs its feature gate, on by default
// since kube 1.36.
func NewPolicyPlugins(c Config) (mutatingPlugins, validatingPlugins []Plugin, err error) {
	if c.Client == nil || c.Dynamic == nil || c.Informers == nil || c.RESTMapper == nil || c.Authorizer == nil || c.Drained == nil {
		return nil, nil, errors.New("the policy plugins need a client, a dynamic client, an informer factory, a REST mapper, an authorizer and a drained channel")
	}
	m, err := mutating.NewPlugin(nil)
	if err != nil {
		return nil, nil, fmt.Errorf("creating the %s plugin: %w", mutating.PluginName, err)
	}
	v, err := validating.NewPlugin(nil)
	if err != nil {
		return nil, nil, fmt.Errorf("creating the %s plugin: %w", validating.PluginName, err)
	}
	gates := c.FeatureGates
	if gates == nil {
		if gates, err = FeatureGate(nil); err != nil {
			return nil, nil, err
		}
	}
	inits := admission.PluginInitializers{
		initializer.NewAPIServerIDInitializer(c.APIServerID),
		initializer.New(c.Client, c.Dynamic, c.Informers, c.Authorizer, gates,
			compatibility.NewEffectiveVersionFromString(kubeVersion, "", ""), c.Drained, resetting(c.RESTMapper)),
		excludedInitializer{},
	}
	for _, p := range []admission.Interface{m, v} {
		inits.Initialize(p)
		if err := admission.ValidateInitialization(p); err != nil {
			return nil, nil, fmt.Errorf("initializing the admission policy plugin %T: %w", p, err)
		}
	}
	bindings := c.Informers.Admissionregistration().V1()
	mutatingOn := gates.Enabled(features.MutatingAdmissionPolicy)
	mutatingBindings := CountConfigured(bindings.MutatingAdmissionPolicyBindings().Informer())
	mutatingPlugins = []Plugin{{
		Name:      mutating.PluginName,
		Interface: mutatingPolicy{m},
		// With its gate off the plugin admits everything without looking: it need not be called.
		Configured: func() bool { return mutatingOn && mutatingBindings() },
	}}
	validatingPlugins = []Plugin{{
		Name:       validating.PluginName,
		Interface:  v,
		Configured: CountConfigured(bindings.ValidatingAdmissionPolicyBindings().Informer()),
	}}
	return mutatingPlugins, validatingPlugins, nil
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
