// Ported from k8s.io/kubernetes v1.37.2 pkg/apis/admissionregistration/v1/defaults.go.

package admissionregistration

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The defaults of admissionregistration.k8s.io/v1, as kube's decoder applies them
// (k8s.io/kubernetes/pkg/apis/admissionregistration/v1/defaults.go and its generated walk).

// defaultWebhookTimeout is kube's timeoutSeconds for a webhook that names none.
const defaultWebhookTimeout int32 = 10

// defaultServicePort is the port of a webhook's service reference that names none.
const defaultServicePort int32 = 443

// defaultWebhookCommon applies the defaults validating and mutating webhooks share.
func defaultWebhookCommon(failurePolicy **admissionregistrationv1.FailurePolicyType, matchPolicy **admissionregistrationv1.MatchPolicyType,
	namespaceSelector, objectSelector **metav1.LabelSelector, timeout **int32,
	clientConfig *admissionregistrationv1.WebhookClientConfig, rules []admissionregistrationv1.RuleWithOperations) {
	if *failurePolicy == nil {
		*failurePolicy = pointerTo(admissionregistrationv1.Fail)
	}
	if *matchPolicy == nil {
		*matchPolicy = pointerTo(admissionregistrationv1.Equivalent)
	}
	if *namespaceSelector == nil {
		*namespaceSelector = &metav1.LabelSelector{}
	}
	if *objectSelector == nil {
		*objectSelector = &metav1.LabelSelector{}
	}
	if *timeout == nil {
		*timeout = pointerTo(defaultWebhookTimeout)
	}
	if s := clientConfig.Service; s != nil && s.Port == nil {
		s.Port = pointerTo(defaultServicePort)
	}
	for i := range rules {
		defaultRule(&rules[i].Rule)
	}
}

func defaultValidatingWebhook(w *admissionregistrationv1.ValidatingWebhook) {
	defaultWebhookCommon(&w.FailurePolicy, &w.MatchPolicy, &w.NamespaceSelector, &w.ObjectSelector, &w.TimeoutSeconds, &w.ClientConfig, w.Rules)
}

// defaultMutatingWebhook adds reinvocationPolicy Never to the validating webhook's defaults.
func defaultMutatingWebhook(w *admissionregistrationv1.MutatingWebhook) {
	defaultWebhookCommon(&w.FailurePolicy, &w.MatchPolicy, &w.NamespaceSelector, &w.ObjectSelector, &w.TimeoutSeconds, &w.ClientConfig, w.Rules)
	if w.ReinvocationPolicy == nil {
		w.ReinvocationPolicy = pointerTo(admissionregistrationv1.NeverReinvocationPolicy)
	}
}

// defaultRule makes a rule without scope match both scopes.
func defaultRule(r *admissionregistrationv1.Rule) {
	if r.Scope == nil {
		r.Scope = pointerTo(admissionregistrationv1.AllScopes)
	}
}

// defaultMatchResources is SetDefaults_MatchResources with the rules inside: a policy's
// matchConstraints or a binding's matchResources, when present.
func defaultMatchResources(m *admissionregistrationv1.MatchResources) {
	if m == nil {
		return
	}
	if m.MatchPolicy == nil {
		m.MatchPolicy = pointerTo(admissionregistrationv1.Equivalent)
	}
	if m.NamespaceSelector == nil {
		m.NamespaceSelector = &metav1.LabelSelector{}
	}
	if m.ObjectSelector == nil {
		m.ObjectSelector = &metav1.LabelSelector{}
	}
	for i := range m.ResourceRules {
		defaultRule(&m.ResourceRules[i].Rule)
	}
	for i := range m.ExcludeResourceRules {
		defaultRule(&m.ExcludeResourceRules[i].Rule)
	}
}

// pointerTo returns a pointer to a copy of v, for the optional fields defaults fill in.
func pointerTo[T any](v T) *T { return &v }
