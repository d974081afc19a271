// Package admission runs kube's admission plugins for apictl's write handlers: the
// MutatingAdmissionWebhook and ValidatingAdmissionWebhook plugins of k8s.io/apiserver, initialized as
// kube-apiserver initializes them, the admission policy plugins (policy*.go) and the ResourceQuota
// plugin (quota.go), in kube's order:
// mutating plugins, then (in the handlers) the object's own validation, then validating plugins.
package admission

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apiserver/pkg/admission"
	genericinitializer "k8s.io/apiserver/pkg/admission/initializer"
	webhookinitializer "k8s.io/apiserver/pkg/admission/plugin/webhook/initializer"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/mutating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/validating"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	quota "k8s.io/apiserver/pkg/quota/v1"
	webhookutil "k8s.io/apiserver/pkg/util/webhook"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/component-base/compatibility"
	"k8s.io/component-base/featuregate"
)

// Config is what the plugins are initialized with, as kube's admission initializers hand it to them.
type Config struct {
	// Client and Dynamic reach the server itself (the namespace lookups of namespaceSelector, the
	// params of policies).
	Client  kubernetes.Interface
	Dynamic dynamic.Interface
	// Informers is the factory the plugins take their configurations from. The caller starts it
	// after New, once every plugin asked for its informers.
	Informers informers.SharedInformerFactory
	// Authorizer answers the authorizer checks of matchConditions and policy expressions.
	Authorizer authorizer.Authorizer
	// RESTMapper maps a policy's paramKind to its resource.
	RESTMapper meta.RESTMapper
	// ServiceResolver turns a webhook's service reference into a URL; nil keeps kube's default
	// (https://<name>.<namespace>.svc:<port>).
	ServiceResolver webhookutil.ServiceResolver
	// FeatureGates are the gates the plugins inspect (see FeatureGate).
	FeatureGates featuregate.FeatureGate
	// WithoutWebhooks leaves the webhook plugins out, for a server that does not serve webhook
	// configurations (their informers would never sync).
	WithoutWebhooks bool
	// APIServerID labels the plugins' metrics, as kube's server identity does.
	APIServerID string
	// Drained is closed when the server stops serving; plugins with background work end then.
	Drained <-chan struct{}
	// Configured, when set, gives the test of whether objects of an admissionregistration.k8s.io/v1
	// resource ("validatingwebhookconfigurations", "mutatingadmissionpolicybindings", ...) exist,
	// or may exist (not known yet): each plugin is called, and built, only while its configurations
	// exist. A server passes the counts of its own watch caches, so that no informer runs for
	// admission until a plugin is built. Nil counts them in informers of Informers, which the
	// caller's Start then runs.
	Configured func(resource string) func() bool
	// Quota, when set, is the quota configuration of kube's ResourceQuota plugin, which then runs
	// last, as in kube (its evaluators: resourcequotas.Configuration). Nil leaves the plugin out, for
	// a server that does not serve resource quotas.
	Quota quota.Configuration
	// Policies, when set, builds the admission policy plugins (NewPolicyPlugins, initialized
	// there): the mutating ones run before the mutating webhooks, the validating ones before the
	// validating webhooks, as in kube's plugin order. Each must set Configured.
	Policies func(Config) (mutating, validating []Plugin, err error)
}

// Plugin is one admission plugin of the chain with the cheap test the handlers use to skip
// admission altogether.
type Plugin struct {
	// Name is kube's plugin name (MutatingAdmissionWebhook, ...).
	Name string
	admission.Interface
	// Configured reports whether the plugin may act on a request: some configuration of it exists,
	// or its configurations are not known yet. A plugin whose Configured is false is not called.
	Configured func() bool
}

// Chain runs the mutating and the validating plugins. Its methods are safe for concurrent use.
type Chain struct {
	mutating   []Plugin
	validating []Plugin
}

// New builds the chain of kube's webhook plugins and the policy plugins. Each plugin is built, and
// initialized and checked as kube-apiserver does it (initializer.New, then the webhook initializer,
// then ValidateInitialization), by the first request that finds it Configured; until then it costs
// nothing. New asks c.Informers for the informers the plugins read, so that the caller's Start runs
// them; nothing runs until the caller starts c.Informers.
func New(c Config) (*Chain, error) {
	if c.Client == nil || c.Informers == nil || c.Drained == nil {
		return nil, errors.New("building admission: a client, an informer factory and a drained channel are needed")
	}
	if c.FeatureGates == nil {
		fg, err := FeatureGate(nil)
		if err != nil {
			return nil, err
		}
		c.FeatureGates = fg
	}
	if c.Configured == nil {
		c.Configured = informerConfigured(c.Informers)
		// Every plugin matches namespaceSelectors against the namespaces' informer: started with
		// the configurations' informers, it is ready when the first plugin is built.
		c.Informers.Core().V1().Namespaces().Informer()
	}
	ch := &Chain{}
	// kube's default plugin order (k8s.io/kubernetes pkg/kubeapiserver/options/plugins.go): the
	// mutating policies run before the mutating webhooks, the validating policies before the
	// validating webhooks.
	if c.Policies != nil {
		pm, pv, err := c.Policies(c)
		if err != nil {
			return nil, fmt.Errorf("building the admission policy plugins: %w", err)
		}
		for _, p := range append(pm, pv...) {
			if p.Configured == nil {
				return nil, fmt.Errorf("admission plugin %s says nothing about its configurations", p.Name)
			}
		}
		ch.mutating = append(ch.mutating, pm...)
		ch.validating = append(ch.validating, pv...)
	}
	if !c.WithoutWebhooks {
		v1 := c.Informers.Admissionregistration().V1()
		ch.mutating = append(ch.mutating, Plugin{Name: mutating.PluginName, Configured: c.Configured("mutatingwebhookconfigurations"),
			Interface: lazyMutating{newLazy(mutating.PluginName, func() (admission.Interface, error) {
				return initWebhook(c, func() (admission.Interface, error) { return mutating.NewMutatingWebhook(nil) },
					func() cache.SharedIndexInformer { return v1.MutatingWebhookConfigurations().Informer() })
			})}})
		ch.validating = append(ch.validating, Plugin{Name: validating.PluginName, Configured: c.Configured("validatingwebhookconfigurations"),
			Interface: lazyValidating{newLazy(validating.PluginName, func() (admission.Interface, error) {
				return initWebhook(c, func() (admission.Interface, error) { return validating.NewValidatingAdmissionWebhook(nil) },
					func() cache.SharedIndexInformer { return v1.ValidatingWebhookConfigurations().Informer() })
			})}})
	}
	if c.Quota != nil {
		ch.validating = append(ch.validating, quotaPlugin(c))
	}
	return ch, nil
}

// initWebhook creates a webhook plugin and initializes it as kube-apiserver does, then starts the
// informers it asked for that are not running yet and waits for those it reads (its
// configurations' and the namespaces').
func initWebhook(c Config, create func() (admission.Interface, error), configurations func() cache.SharedIndexInformer) (admission.Interface, error) {
	p, err := create()
	if err != nil {
		return nil, err
	}
	admission.PluginInitializers{
		genericinitializer.NewAPIServerIDInitializer(c.APIServerID),
		genericinitializer.New(c.Client, c.Dynamic, c.Informers, c.Authorizer, c.FeatureGates,
			compatibility.NewEffectiveVersionFromString(kubeVersion, "", ""), c.Drained, c.RESTMapper),
		webhookinitializer.NewPluginInitializer(nil, c.ServiceResolver),
		// Only read with the ExcludeAdmissionWebhookVirtualResources gate, as in kube.
		excludedInitializer{},
	}.Initialize(p)
	if err := admission.ValidateInitialization(p); err != nil {
		return nil, err
	}
	if err := startInformers(c, configurations(), c.Informers.Core().V1().Namespaces().Informer()); err != nil {
		return nil, err
	}
	return p, nil
}

// Names lists the plugins in the order they run.
func (c *Chain) Names() []string {
	var names []string
	for _, p := range c.mutating {
		names = append(names, p.Name)
	}
	for _, p := range c.validating {
		names = append(names, p.Name)
	}
	return names
}

// String names the chain for logs.
func (c *Chain) String() string { return strings.Join(c.Names(), ",") }

// Active reports whether any plugin may act on a request. When it is false the handlers skip
// building attributes, which keeps writes as cheap as without admission.
func (c *Chain) Active() bool {
	if c == nil {
		return false
	}
	for _, p := range c.mutating {
		if p.Configured() {
			return true
		}
	}
	for _, p := range c.validating {
		if p.Configured() {
			return true
		}
	}
	return false
}

// Admit runs the mutating plugins on a; they may change a.GetObject() in place. A webhook that asks
// to be reinvoked (reinvocationPolicy IfNeeded) after a later plugin changed the object is, as in
// kube's reinvocation handler: the mutating plugins run a second time.
func (c *Chain) Admit(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	if c == nil {
		return nil
	}
	if err := c.admitOnce(ctx, a, o); err != nil {
		return err
	}
	if s := a.GetReinvocationContext(); s.ShouldReinvoke() {
		s.SetIsReinvoke()
		return c.admitOnce(ctx, a, o)
	}
	return nil
}

func (c *Chain) admitOnce(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	for _, p := range c.mutating {
		m, ok := p.Interface.(admission.MutationInterface)
		if !ok || !p.Handles(a.GetOperation()) || !p.Configured() {
			continue
		}
		if err := m.Admit(ctx, a, o); err != nil {
			return err
		}
	}
	return nil
}

// Validate runs the validating plugins on a; the first refusal ends it.
func (c *Chain) Validate(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	if c == nil {
		return nil
	}
	for _, p := range c.validating {
		v, ok := p.Interface.(admission.ValidationInterface)
		if !ok || !p.Handles(a.GetOperation()) || !p.Configured() {
			continue
		}
		if err := v.Validate(ctx, a, o); err != nil {
			return err
		}
	}
	return nil
}
