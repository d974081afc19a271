package admissionregistration

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apictl/apictl/pkg/kinds"
)

// admissionKind is what the admissionregistration kinds share: their validation checks metadata
// itself (kube's Validate* functions call ValidateObjectMeta), and names ending in .static.k8s.io
// are refused on create (ManifestBasedAdmissionControlConfig is on by default in 1.37).
type admissionKind struct{}

func (admissionKind) ValidatesMeta() {}

// generationOnCreate starts generation at 1, as every admissionregistration strategy does.
func generationOnCreate(obj runtime.Object) {
	if m, ok := obj.(interface{ SetGeneration(int64) }); ok {
		m.SetGeneration(1)
	}
}

// webhookConfigRules are kube's strategy for a webhook configuration kind: C is the configuration
// (*ValidatingWebhookConfiguration or *MutatingWebhookConfiguration), H its webhook type. The two
// kinds differ only in their webhooks' defaults, validation and update options.
type webhookConfigRules[C interface {
	runtime.Object
	metav1.Object
}, H any] struct {
	admissionKind
	compilers *celCompilers
	// webhooks are the configuration's webhooks (the slice shares their array: defaults set in place).
	webhooks       func(C) []H
	defaultWebhook func(*H)
	validateConfig func(*celCompilers, C, webhookOptions) field.ErrorList
	updateOptions  func(webhooks, old []H) webhookOptions
}

func validatingWebhookRules(compilers *celCompilers) kinds.Strategy {
	return webhookConfigRules[*admissionregistrationv1.ValidatingWebhookConfiguration, admissionregistrationv1.ValidatingWebhook]{
		compilers: compilers,
		webhooks: func(c *admissionregistrationv1.ValidatingWebhookConfiguration) []admissionregistrationv1.ValidatingWebhook {
			return c.Webhooks
		},
		defaultWebhook: defaultValidatingWebhook,
		validateConfig: (*celCompilers).validateValidatingWebhookConfiguration,
		updateOptions:  validatingUpdateOptions,
	}
}

func mutatingWebhookRules(compilers *celCompilers) kinds.Strategy {
	return webhookConfigRules[*admissionregistrationv1.MutatingWebhookConfiguration, admissionregistrationv1.MutatingWebhook]{
		compilers: compilers,
		webhooks: func(c *admissionregistrationv1.MutatingWebhookConfiguration) []admissionregistrationv1.MutatingWebhook {
			return c.Webhooks
		},
		defaultWebhook: defaultMutatingWebhook,
		validateConfig: (*celCompilers).validateMutatingWebhookConfiguration,
		updateOptions:  mutatingUpdateOptions,
	}
}

func (r webhookConfigRules[C, H]) Default(obj runtime.Object) {
	hooks := r.webhooks(obj.(C))
	for i := range hooks {
		r.defaultWebhook(&hooks[i])
	}
}

func (r webhookConfigRules[C, H]) PrepareForCreate(obj runtime.Object) {
	r.Default(obj)
	generationOnCreate(obj)
}

// PrepareForUpdate moves generation on when the webhooks changed.
func (r webhookConfigRules[C, H]) PrepareForUpdate(obj, old runtime.Object) {
	r.Default(obj)
	c, oldC := obj.(C), old.(C)
	if !apiequality.Semantic.DeepEqual(r.webhooks(c), r.webhooks(oldC)) {
		c.SetGeneration(oldC.GetGeneration() + 1)
	}
}

func (r webhookConfigRules[C, H]) Validate(obj runtime.Object) field.ErrorList {
	c := obj.(C)
	errs := r.validateConfig(r.compilers, c, createWebhookOptions())
	return append(errs, validateStaticSuffix(c.GetName())...)
}

func (r webhookConfigRules[C, H]) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	c, oldC := obj.(C), old.(C)
	return r.validateConfig(r.compilers, c, r.updateOptions(r.webhooks(c), r.webhooks(oldC)))
}

// validatingPolicyRules are kube's ValidatingAdmissionPolicy strategy: status is the type checker's
// and is written through /status only.
type validatingPolicyRules struct {
	admissionKind
	compilers *celCompilers
}

func (validatingPolicyRules) Default(obj runtime.Object) {
	p := obj.(*admissionregistrationv1.ValidatingAdmissionPolicy)
	if p.Spec.FailurePolicy == nil {
		p.Spec.FailurePolicy = pointerTo(admissionregistrationv1.Fail)
	}
	defaultMatchResources(p.Spec.MatchConstraints)
}

func (r validatingPolicyRules) PrepareForCreate(obj runtime.Object) {
	r.Default(obj)
	p := obj.(*admissionregistrationv1.ValidatingAdmissionPolicy)
	p.Status = admissionregistrationv1.ValidatingAdmissionPolicyStatus{}
	p.Generation = 1
}

func (r validatingPolicyRules) PrepareForUpdate(obj, old runtime.Object) {
	r.Default(obj)
	p, oldP := obj.(*admissionregistrationv1.ValidatingAdmissionPolicy), old.(*admissionregistrationv1.ValidatingAdmissionPolicy)
	p.Status = oldP.Status
	if !apiequality.Semantic.DeepEqual(p.Spec, oldP.Spec) {
		p.Generation = oldP.Generation + 1
	}
}

func (r validatingPolicyRules) Validate(obj runtime.Object) field.ErrorList {
	p := obj.(*admissionregistrationv1.ValidatingAdmissionPolicy)
	errs := r.compilers.validateValidatingPolicy(p, policyOptions{})
	return append(errs, validateStaticSuffix(p.Name)...)
}

func (r validatingPolicyRules) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	p, oldP := obj.(*admissionregistrationv1.ValidatingAdmissionPolicy), old.(*admissionregistrationv1.ValidatingAdmissionPolicy)
	return r.compilers.validateValidatingPolicy(p, policyOptions{
		ignoreMatchConditions: apiequality.Semantic.DeepEqual(p.Spec.ParamKind, oldP.Spec.ParamKind) &&
			apiequality.Semantic.DeepEqual(p.Spec.MatchConditions, oldP.Spec.MatchConditions),
		preexisting: validatingPolicyExpressions(oldP),
	})
}

// ValidateStatusUpdate is kube's ValidateValidatingAdmissionPolicyStatusUpdate.
func (validatingPolicyRules) ValidateStatusUpdate(obj, _ runtime.Object) field.ErrorList {
	return validateValidatingPolicyStatus(&obj.(*admissionregistrationv1.ValidatingAdmissionPolicy).Status, field.NewPath("status"))
}

// PrepareForStatusUpdate keeps everything of old but the status: kube's status strategy takes the spec and
// the user-settable metadata (labels, annotations, finalizers, owners) from the stored object.
func (validatingPolicyRules) PrepareForStatusUpdate(obj, old runtime.Object) runtime.Object {
	out := old.(*admissionregistrationv1.ValidatingAdmissionPolicy).DeepCopy()
	out.Status = obj.(*admissionregistrationv1.ValidatingAdmissionPolicy).Status
	return out
}

// mutatingPolicyRules are kube's MutatingAdmissionPolicy strategy (no status subresource).
type mutatingPolicyRules struct {
	admissionKind
	compilers *celCompilers
}

func (mutatingPolicyRules) Default(obj runtime.Object) {
	p := obj.(*admissionregistrationv1.MutatingAdmissionPolicy)
	if p.Spec.FailurePolicy == nil {
		p.Spec.FailurePolicy = pointerTo(admissionregistrationv1.Fail)
	}
	defaultMatchResources(p.Spec.MatchConstraints)
}

func (r mutatingPolicyRules) PrepareForCreate(obj runtime.Object) {
	r.Default(obj)
	generationOnCreate(obj)
}

func (r mutatingPolicyRules) PrepareForUpdate(obj, old runtime.Object) {
	r.Default(obj)
	p, oldP := obj.(*admissionregistrationv1.MutatingAdmissionPolicy), old.(*admissionregistrationv1.MutatingAdmissionPolicy)
	if !apiequality.Semantic.DeepEqual(p.Spec, oldP.Spec) {
		p.Generation = oldP.Generation + 1
	}
}

func (r mutatingPolicyRules) Validate(obj runtime.Object) field.ErrorList {
	p := obj.(*admissionregistrationv1.MutatingAdmissionPolicy)
	errs := r.compilers.validateMutatingPolicy(p, policyOptions{})
	return append(errs, validateStaticSuffix(p.Name)...)
}

func (r mutatingPolicyRules) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	p, oldP := obj.(*admissionregistrationv1.MutatingAdmissionPolicy), old.(*admissionregistrationv1.MutatingAdmissionPolicy)
	return r.compilers.validateMutatingPolicy(p, policyOptions{
		ignoreMatchConditions: apiequality.Semantic.DeepEqual(p.Spec.ParamKind, oldP.Spec.ParamKind) &&
			apiequality.Semantic.DeepEqual(p.Spec.MatchConditions, oldP.Spec.MatchConditions),
		preexisting: mutatingPolicyExpressions(oldP),
	})
}

// policyBindingRules are kube's strategy for a policy binding kind: B is the binding
// (*ValidatingAdmissionPolicyBinding or *MutatingAdmissionPolicyBinding), S its spec.
type policyBindingRules[B interface {
	runtime.Object
	metav1.Object
}, S any] struct {
	admissionKind
	spec           func(B) *S
	matchResources func(*S) *admissionregistrationv1.MatchResources
	// validateBinding is kube's validation of the kind; finish, when set, rewrites the errors of
	// create and update at the end (the validating binding's declarative required fields).
	validateBinding func(B) field.ErrorList
	finish          func(field.ErrorList, B) field.ErrorList
}

func validatingBindingRules() kinds.Strategy {
	return policyBindingRules[*admissionregistrationv1.ValidatingAdmissionPolicyBinding, admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec]{
		spec: func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec {
			return &b.Spec
		},
		matchResources: func(s *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) *admissionregistrationv1.MatchResources {
			return s.MatchResources
		},
		validateBinding: validateValidatingBinding,
		finish:          declarativeBindingErrors,
	}
}

func mutatingBindingRules() kinds.Strategy {
	return policyBindingRules[*admissionregistrationv1.MutatingAdmissionPolicyBinding, admissionregistrationv1.MutatingAdmissionPolicyBindingSpec]{
		spec: func(b *admissionregistrationv1.MutatingAdmissionPolicyBinding) *admissionregistrationv1.MutatingAdmissionPolicyBindingSpec {
			return &b.Spec
		},
		matchResources: func(s *admissionregistrationv1.MutatingAdmissionPolicyBindingSpec) *admissionregistrationv1.MatchResources {
			return s.MatchResources
		},
		validateBinding: validateMutatingBinding,
	}
}

func (r policyBindingRules[B, S]) Default(obj runtime.Object) {
	defaultMatchResources(r.matchResources(r.spec(obj.(B))))
}

func (r policyBindingRules[B, S]) PrepareForCreate(obj runtime.Object) {
	r.Default(obj)
	generationOnCreate(obj)
}

// PrepareForUpdate moves generation on when the spec changed.
func (r policyBindingRules[B, S]) PrepareForUpdate(obj, old runtime.Object) {
	r.Default(obj)
	b, oldB := obj.(B), old.(B)
	if !apiequality.Semantic.DeepEqual(r.spec(b), r.spec(oldB)) {
		b.SetGeneration(oldB.GetGeneration() + 1)
	}
}

func (r policyBindingRules[B, S]) Validate(obj runtime.Object) field.ErrorList {
	b := obj.(B)
	errs := append(r.validateBinding(b), validateStaticSuffix(b.GetName())...)
	return r.finished(errs, b)
}

func (r policyBindingRules[B, S]) ValidateUpdate(obj, _ runtime.Object) field.ErrorList {
	b := obj.(B)
	return r.finished(r.validateBinding(b), b)
}

func (r policyBindingRules[B, S]) finished(errs field.ErrorList, b B) field.ErrorList {
	if r.finish == nil {
		return errs
	}
	return r.finish(errs, b)
}
