// Ported from k8s.io/kubernetes v1.37.2 pkg/apis/admissionregistration/validation/validation.go
// (the webhook configurations' validation).

package admissionregistration

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/util/webhook"
)

// The validation of webhook configurations, as kube's
// k8s.io/kubernetes/pkg/apis/admissionregistration/validation writes it for the internal types:
// the same checks in the same order with the same messages, on the v1 types. Every error is
// reported at once.

// staticConfigSuffix ends the names reserved for configurations loaded from manifests at start.
const staticConfigSuffix = ".static.k8s.io"

// validateStaticSuffix refuses a reserved name on create, as kube does with
// ManifestBasedAdmissionControlConfig on (beta, default on in 1.37).
func validateStaticSuffix(name string) field.ErrorList {
	if !strings.HasSuffix(name, staticConfigSuffix) {
		return nil
	}
	return field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), name,
		fmt.Sprintf("names ending with %q are reserved for static manifest-based configurations and cannot be managed via the API", staticConfigSuffix))}
}

// webhookOptions are kube's validationOptions for webhook configurations: a create is strict; an
// update keeps accepting what the stored object already had.
type webhookOptions struct {
	ignoreMatchConditions                   bool
	requireNoSideEffects                    bool
	requireRecognizedAdmissionReviewVersion bool
	requireUniqueWebhookNames               bool
	allowInvalidLabelValueInSelector        bool
	// preexisting are the match condition expressions of the stored object, compiled with the
	// stored-expressions environment (which allows libraries newer than the compatibility version).
	preexisting sets.Set[string]
}

func createWebhookOptions() webhookOptions {
	return webhookOptions{requireNoSideEffects: true, requireRecognizedAdmissionReviewVersion: true, requireUniqueWebhookNames: true}
}

// webhookSummary is what an update's options are computed from, for either kind of webhook.
type webhookSummary struct {
	name                    string
	sideEffects             *admissionregistrationv1.SideEffectClass
	admissionReviewVersions []string
	namespaceSelector       *metav1.LabelSelector
	objectSelector          *metav1.LabelSelector
	matchConditions         []admissionregistrationv1.MatchCondition
}

func validatingSummaries(hooks []admissionregistrationv1.ValidatingWebhook) []webhookSummary {
	out := make([]webhookSummary, len(hooks))
	for i, h := range hooks {
		out[i] = webhookSummary{h.Name, h.SideEffects, h.AdmissionReviewVersions, h.NamespaceSelector, h.ObjectSelector, h.MatchConditions}
	}
	return out
}

func mutatingSummaries(hooks []admissionregistrationv1.MutatingWebhook) []webhookSummary {
	out := make([]webhookSummary, len(hooks))
	for i, h := range hooks {
		out[i] = webhookSummary{h.Name, h.SideEffects, h.AdmissionReviewVersions, h.NamespaceSelector, h.ObjectSelector, h.MatchConditions}
	}
	return out
}

func validatingUpdateOptions(hooks, old []admissionregistrationv1.ValidatingWebhook) webhookOptions {
	return updateWebhookOptions(validatingSummaries(hooks), validatingSummaries(old))
}

func mutatingUpdateOptions(hooks, old []admissionregistrationv1.MutatingWebhook) webhookOptions {
	return updateWebhookOptions(mutatingSummaries(hooks), mutatingSummaries(old))
}

// updateWebhookOptions relaxes each rule the stored webhooks already broke, and skips compiling
// match conditions when none changed.
func updateWebhookOptions(hooks, old []webhookSummary) webhookOptions {
	opts := webhookOptions{
		ignoreMatchConditions:                   len(hooks) == len(old),
		requireNoSideEffects:                    true,
		requireRecognizedAdmissionReviewVersion: true,
		requireUniqueWebhookNames:               true,
		preexisting:                             sets.New[string](),
	}
	names := sets.New[string]()
	for i, h := range old {
		if opts.ignoreMatchConditions && !reflect.DeepEqual(hooks[i].matchConditions, h.matchConditions) {
			opts.ignoreMatchConditions = false
		}
		if h.sideEffects == nil || !noSideEffectClasses.Has(string(*h.sideEffects)) {
			opts.requireNoSideEffects = false
		}
		if len(h.admissionReviewVersions) > 0 && !slices.ContainsFunc(h.admissionReviewVersions, isAcceptedAdmissionReviewVersion) {
			opts.requireRecognizedAdmissionReviewVersion = false
		}
		if names.Has(h.name) {
			opts.requireUniqueWebhookNames = false
		}
		names.Insert(h.name)
		for _, sel := range []*metav1.LabelSelector{h.namespaceSelector, h.objectSelector} {
			if sel != nil && len(metav1validation.ValidateLabelSelector(sel, metav1validation.LabelSelectorValidationOptions{}, nil)) > 0 {
				opts.allowInvalidLabelValueInSelector = true
			}
		}
		for _, mc := range h.matchConditions {
			opts.preexisting.Insert(mc.Expression)
		}
	}
	return opts
}

var (
	supportedFailurePolicies      = sets.New(string(admissionregistrationv1.Ignore), string(admissionregistrationv1.Fail))
	supportedMatchPolicies        = sets.New(string(admissionregistrationv1.Exact), string(admissionregistrationv1.Equivalent))
	noSideEffectClasses           = sets.New(string(admissionregistrationv1.SideEffectClassNone), string(admissionregistrationv1.SideEffectClassNoneOnDryRun))
	supportedReinvocationPolicies = sets.New(string(admissionregistrationv1.NeverReinvocationPolicy), string(admissionregistrationv1.IfNeededReinvocationPolicy))
	supportedOperations           = sets.New(string(admissionregistrationv1.OperationAll), string(admissionregistrationv1.Create),
		string(admissionregistrationv1.Update), string(admissionregistrationv1.Delete), string(admissionregistrationv1.Connect))
	// supportedMutatingOperations leave out DELETE: a mutating policy cannot mutate a deletion.
	supportedMutatingOperations = sets.New(string(admissionregistrationv1.OperationAll), string(admissionregistrationv1.Create),
		string(admissionregistrationv1.Update), string(admissionregistrationv1.Connect))
	validScopes = sets.New(string(admissionregistrationv1.ClusterScope), string(admissionregistrationv1.NamespacedScope), string(admissionregistrationv1.AllScopes))
)

// acceptedAdmissionReviewVersions are the AdmissionReview versions kube's webhook client speaks.
var acceptedAdmissionReviewVersions = []string{"v1", "v1beta1"}

func isAcceptedAdmissionReviewVersion(v string) bool {
	return slices.Contains(acceptedAdmissionReviewVersions, v)
}

func (c *celCompilers) validateValidatingWebhookConfiguration(e *admissionregistrationv1.ValidatingWebhookConfiguration, opts webhookOptions) field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(&e.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	names := sets.New[string]()
	for i := range e.Webhooks {
		hook := &e.Webhooks[i]
		fld := field.NewPath("webhooks").Index(i)
		errs = append(errs, c.validateWebhook(webhookFields{
			name: hook.Name, rules: hook.Rules, failurePolicy: hook.FailurePolicy, matchPolicy: hook.MatchPolicy,
			sideEffects: hook.SideEffects, timeoutSeconds: hook.TimeoutSeconds, namespaceSelector: hook.NamespaceSelector,
			objectSelector: hook.ObjectSelector, clientConfig: hook.ClientConfig, matchConditions: hook.MatchConditions,
		}, opts, fld)...)
		errs = append(errs, validateAdmissionReviewVersions(hook.AdmissionReviewVersions, opts.requireRecognizedAdmissionReviewVersion, fld.Child("admissionReviewVersions"))...)
		errs = append(errs, uniqueWebhookName(names, hook.Name, opts, fld)...)
	}
	return errs
}

func (c *celCompilers) validateMutatingWebhookConfiguration(e *admissionregistrationv1.MutatingWebhookConfiguration, opts webhookOptions) field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(&e.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	names := sets.New[string]()
	for i := range e.Webhooks {
		hook := &e.Webhooks[i]
		fld := field.NewPath("webhooks").Index(i)
		errs = append(errs, c.validateWebhook(webhookFields{
			name: hook.Name, rules: hook.Rules, failurePolicy: hook.FailurePolicy, matchPolicy: hook.MatchPolicy,
			sideEffects: hook.SideEffects, timeoutSeconds: hook.TimeoutSeconds, namespaceSelector: hook.NamespaceSelector,
			objectSelector: hook.ObjectSelector, clientConfig: hook.ClientConfig, matchConditions: hook.MatchConditions,
			mutating: true, reinvocationPolicy: hook.ReinvocationPolicy,
		}, opts, fld)...)
		errs = append(errs, validateAdmissionReviewVersions(hook.AdmissionReviewVersions, opts.requireRecognizedAdmissionReviewVersion, fld.Child("admissionReviewVersions"))...)
		errs = append(errs, uniqueWebhookName(names, hook.Name, opts, fld)...)
	}
	return errs
}

func uniqueWebhookName(names sets.Set[string], name string, opts webhookOptions, fld *field.Path) field.ErrorList {
	if !opts.requireUniqueWebhookNames || name == "" {
		return nil
	}
	if names.Has(name) {
		return field.ErrorList{field.Duplicate(fld.Child("name"), name)}
	}
	names.Insert(name)
	return nil
}

// webhookFields are the fields of a validating or a mutating webhook that validation reads.
type webhookFields struct {
	name               string
	rules              []admissionregistrationv1.RuleWithOperations
	failurePolicy      *admissionregistrationv1.FailurePolicyType
	matchPolicy        *admissionregistrationv1.MatchPolicyType
	sideEffects        *admissionregistrationv1.SideEffectClass
	timeoutSeconds     *int32
	namespaceSelector  *metav1.LabelSelector
	objectSelector     *metav1.LabelSelector
	clientConfig       admissionregistrationv1.WebhookClientConfig
	matchConditions    []admissionregistrationv1.MatchCondition
	mutating           bool
	reinvocationPolicy *admissionregistrationv1.ReinvocationPolicyType
}

// validateWebhook is kube's validateValidatingWebhook and validateMutatingWebhook, which differ
// only in the mutating webhook's reinvocationPolicy (checked after the selectors).
func (c *celCompilers) validateWebhook(hook webhookFields, opts webhookOptions, fld *field.Path) field.ErrorList {
	errs := utilvalidation.IsFullyQualifiedName(fld.Child("name"), hook.name)
	for i := range hook.rules {
		errs = append(errs, validateRuleWithOperations(&hook.rules[i], fld.Child("rules").Index(i))...)
	}
	if hook.failurePolicy != nil && !supportedFailurePolicies.Has(string(*hook.failurePolicy)) {
		errs = append(errs, field.NotSupported(fld.Child("failurePolicy"), *hook.failurePolicy, sets.List(supportedFailurePolicies)))
	}
	if hook.matchPolicy != nil && !supportedMatchPolicies.Has(string(*hook.matchPolicy)) {
		errs = append(errs, field.NotSupported(fld.Child("matchPolicy"), *hook.matchPolicy, sets.List(supportedMatchPolicies)))
	}
	// Only None and NoneOnDryRun are accepted in v1 (Unknown and Some were v1beta1's); an update
	// keeps accepting the other two when the stored webhooks had them.
	allowedSideEffects := sets.New(sets.List(noSideEffectClasses)...)
	if !opts.requireNoSideEffects {
		allowedSideEffects.Insert(string(admissionregistrationv1.SideEffectClassUnknown), string(admissionregistrationv1.SideEffectClassSome))
	}
	if hook.sideEffects == nil {
		errs = append(errs, field.Required(fld.Child("sideEffects"), fmt.Sprintf("must specify one of %v", strings.Join(sets.List(allowedSideEffects), ", "))))
	}
	if hook.sideEffects != nil && !allowedSideEffects.Has(string(*hook.sideEffects)) {
		errs = append(errs, field.NotSupported(fld.Child("sideEffects"), *hook.sideEffects, sets.List(allowedSideEffects)))
	}
	if t := hook.timeoutSeconds; t != nil && (*t > 30 || *t < 1) {
		errs = append(errs, field.Invalid(fld.Child("timeoutSeconds"), *t, "the timeout value must be between 1 and 30 seconds"))
	}
	selectorOpts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: opts.allowInvalidLabelValueInSelector}
	if hook.namespaceSelector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(hook.namespaceSelector, selectorOpts, fld.Child("namespaceSelector"))...)
	}
	if hook.objectSelector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(hook.objectSelector, selectorOpts, fld.Child("objectSelector"))...)
	}
	if hook.mutating && hook.reinvocationPolicy != nil && !supportedReinvocationPolicies.Has(string(*hook.reinvocationPolicy)) {
		errs = append(errs, field.NotSupported(fld.Child("reinvocationPolicy"), *hook.reinvocationPolicy, sets.List(supportedReinvocationPolicies)))
	}
	errs = append(errs, validateClientConfig(hook.clientConfig, fld.Child("clientConfig"))...)
	if !opts.ignoreMatchConditions {
		errs = append(errs, c.validateMatchConditions(hook.matchConditions, matchConditionOptions{preexisting: opts.preexisting}, fld.Child("matchConditions"))...)
	}
	return errs
}

// validateClientConfig requires exactly one of url (https, no user, query or fragment) and
// service (name, namespace, a path and a port that are valid), with kube's messages from
// k8s.io/apiserver's webhook package.
func validateClientConfig(cc admissionregistrationv1.WebhookClientConfig, fld *field.Path) field.ErrorList {
	switch {
	case (cc.URL == nil) == (cc.Service == nil):
		return field.ErrorList{field.Required(fld, "exactly one of url or service is required")}
	case cc.URL != nil:
		return webhook.ValidateWebhookURL(fld.Child("url"), *cc.URL, true)
	default:
		port := defaultServicePort
		if cc.Service.Port != nil {
			port = *cc.Service.Port
		}
		return webhook.ValidateWebhookService(fld.Child("service"), cc.Service.Name, cc.Service.Namespace, cc.Service.Path, port)
	}
}

func validateAdmissionReviewVersions(versions []string, requireRecognized bool, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(versions) < 1 {
		return field.ErrorList{field.Required(fld, fmt.Sprintf("must specify one of %v", strings.Join(acceptedAdmissionReviewVersions, ", ")))}
	}
	seen := sets.New[string]()
	accepted := false
	for i, v := range versions {
		if seen.Has(v) {
			errs = append(errs, field.Invalid(fld.Index(i), v, "duplicate version"))
			continue
		}
		seen.Insert(v)
		for _, msg := range utilvalidation.IsDNS1035Label(v) {
			errs = append(errs, field.Invalid(fld.Index(i), v, msg))
		}
		if isAcceptedAdmissionReviewVersion(v) {
			accepted = true
		}
	}
	if requireRecognized && !accepted {
		errs = append(errs, field.Invalid(fld, versions, fmt.Sprintf("must include at least one of %v", strings.Join(acceptedAdmissionReviewVersions, ", "))))
	}
	return errs
}

func validateRuleWithOperations(r *admissionregistrationv1.RuleWithOperations, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(r.Operations) == 0 {
		errs = append(errs, field.Required(fld.Child("operations"), ""))
	}
	if len(r.Operations) > 1 && slices.Contains(r.Operations, admissionregistrationv1.OperationAll) {
		errs = append(errs, field.Invalid(fld.Child("operations"), r.Operations, "if '*' is present, must not specify other operations"))
	}
	for i, op := range r.Operations {
		if !supportedOperations.Has(string(op)) {
			errs = append(errs, field.NotSupported(fld.Child("operations").Index(i), op, sets.List(supportedOperations)))
		}
	}
	return append(errs, validateRule(&r.Rule, fld)...)
}

func validateRule(r *admissionregistrationv1.Rule, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(r.APIGroups) == 0 {
		errs = append(errs, field.Required(fld.Child("apiGroups"), ""))
	}
	if len(r.APIGroups) > 1 && slices.Contains(r.APIGroups, "*") {
		errs = append(errs, field.Invalid(fld.Child("apiGroups"), r.APIGroups, "if '*' is present, must not specify other API groups"))
	}
	// The group may be empty (the core group); a version may not.
	if len(r.APIVersions) == 0 {
		errs = append(errs, field.Required(fld.Child("apiVersions"), ""))
	}
	if len(r.APIVersions) > 1 && slices.Contains(r.APIVersions, "*") {
		errs = append(errs, field.Invalid(fld.Child("apiVersions"), r.APIVersions, "if '*' is present, must not specify other API versions"))
	}
	for i, v := range r.APIVersions {
		if v == "" {
			errs = append(errs, field.Required(fld.Child("apiVersions").Index(i), ""))
		}
	}
	errs = append(errs, validateResources(r.Resources, fld.Child("resources"))...)
	if r.Scope != nil && !validScopes.Has(string(*r.Scope)) {
		errs = append(errs, field.NotSupported(fld.Child("scope"), *r.Scope, sets.List(validScopes)))
	}
	return errs
}

// validateResources checks resources with their subresources and wildcards: "*" (every resource),
// "x/*" (every subresource of x), "*/x" (subresource x of every resource), "*/*".
func validateResources(resources []string, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(resources) == 0 {
		errs = append(errs, field.Required(fld, ""))
	}
	withWildcardSub := sets.New[string]()
	subWithWildcardRes := sets.New[string]()
	doubleWildcard, singleWildcard, withoutSub := false, false, false
	for i, resSub := range resources {
		if resSub == "" {
			errs = append(errs, field.Required(fld.Index(i), ""))
			continue
		}
		doubleWildcard = doubleWildcard || resSub == "*/*"
		singleWildcard = singleWildcard || resSub == "*"
		res, sub, ok := strings.Cut(resSub, "/")
		if !ok {
			// kube keeps only the last plain resource's answer here.
			withoutSub = resSub != "*"
			continue
		}
		if withWildcardSub.Has(res) {
			errs = append(errs, field.Invalid(fld.Index(i), resSub, fmt.Sprintf("if '%s/*' is present, must not specify %s", res, resSub)))
		}
		if subWithWildcardRes.Has(sub) {
			errs = append(errs, field.Invalid(fld.Index(i), resSub, fmt.Sprintf("if '*/%s' is present, must not specify %s", sub, resSub)))
		}
		if sub == "*" {
			withWildcardSub.Insert(res)
		}
		if res == "*" {
			subWithWildcardRes.Insert(sub)
		}
	}
	if len(resources) > 1 && doubleWildcard {
		errs = append(errs, field.Invalid(fld, resources, "if '*/*' is present, must not specify other resources"))
	}
	if singleWildcard && withoutSub {
		errs = append(errs, field.Invalid(fld, resources, "if '*' is present, must not specify other resources without subresources"))
	}
	return errs
}
