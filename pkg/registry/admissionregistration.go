package registry

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// admissionRegistrationRules returns the rules of the admissionregistration.k8s.io/v1 kinds: kube's
// strategies (pkg/registry/admissionregistration/*), its v1 defaults and its validation, which
// lives in k8s.io/kubernetes and is therefore written again here on the v1 types, message for
// message (admissionvalidation.go, admissionpolicyvalidation.go).
func admissionRegistrationRules(gvk schema.GroupVersionKind) (kindRules, bool) {
	if gvk.GroupVersion() != admissionregistrationv1.SchemeGroupVersion {
		return nil, false
	}
	switch gvk.Kind {
	case "ValidatingWebhookConfiguration":
		return validatingWebhookRules{compilers: newCELCompilers()}, true
	case "MutatingWebhookConfiguration":
		return mutatingWebhookRules{compilers: newCELCompilers()}, true
	case "ValidatingAdmissionPolicy":
		return validatingPolicyRules{compilers: newCELCompilers()}, true
	case "ValidatingAdmissionPolicyBinding":
		return validatingBindingRules{}, true
	case "MutatingAdmissionPolicy":
		return mutatingPolicyRules{compilers: newCELCompilers()}, true
	case "MutatingAdmissionPolicyBinding":
		return mutatingBindingRules{}, true
	}
	return nil, false
}

// admissionKind is what the admissionregistration kinds share: their validation checks metadata
// itself (kube's Validate* functions call ValidateObjectMeta), and names ending in .static.k8s.io
// are refused on create (ManifestBasedAdmissionControlConfig is on by default in 1.37).
type admissionKind struct{}

func (admissionKind) validatesMeta() {}

// generationOnCreate starts generation at 1, as every admissionregistration strategy does.
func generationOnCreate(obj runtime.Object) {
	if m, ok := obj.(interface{ SetGeneration(int64) }); ok {
		m.SetGeneration(1)
	}
}

// validatingWebhookRules are kube's ValidatingWebhookConfiguration strategy.
type validatingWebhookRules struct {
	admissionKind
	compilers *celCompilers
}

func (validatingWebhookRules) setDefaults(obj runtime.Object) {
	c := obj.(*admissionregistrationv1.ValidatingWebhookConfiguration)
	for i := range c.Webhooks {
		defaultValidatingWebhook(&c.Webhooks[i])
	}
}

func (r validatingWebhookRules) prepareCreate(obj runtime.Object) {
	r.setDefaults(obj)
	generationOnCreate(obj)
}

// prepareUpdate moves generation on when the webhooks changed.
func (r validatingWebhookRules) prepareUpdate(obj, old runtime.Object) {
	r.setDefaults(obj)
	c, oldC := obj.(*admissionregistrationv1.ValidatingWebhookConfiguration), old.(*admissionregistrationv1.ValidatingWebhookConfiguration)
	if !apiequality.Semantic.DeepEqual(c.Webhooks, oldC.Webhooks) {
		c.Generation = oldC.Generation + 1
	}
}

func (r validatingWebhookRules) validate(obj runtime.Object) field.ErrorList {
	c := obj.(*admissionregistrationv1.ValidatingWebhookConfiguration)
	errs := r.compilers.validateValidatingWebhookConfiguration(c, createWebhookOptions())
	return append(errs, validateStaticSuffix(c.Name)...)
}

func (r validatingWebhookRules) validateUpdate(obj, old runtime.Object) field.ErrorList {
	c, oldC := obj.(*admissionregistrationv1.ValidatingWebhookConfiguration), old.(*admissionregistrationv1.ValidatingWebhookConfiguration)
	return r.compilers.validateValidatingWebhookConfiguration(c, validatingUpdateOptions(c.Webhooks, oldC.Webhooks))
}

// mutatingWebhookRules are kube's MutatingWebhookConfiguration strategy.
type mutatingWebhookRules struct {
	admissionKind
	compilers *celCompilers
}

func (mutatingWebhookRules) setDefaults(obj runtime.Object) {
	c := obj.(*admissionregistrationv1.MutatingWebhookConfiguration)
	for i := range c.Webhooks {
		defaultMutatingWebhook(&c.Webhooks[i])
	}
}

func (r mutatingWebhookRules) prepareCreate(obj runtime.Object) {
	r.setDefaults(obj)
	generationOnCreate(obj)
}

func (r mutatingWebhookRules) prepareUpdate(obj, old runtime.Object) {
	r.setDefaults(obj)
	c, oldC := obj.(*admissionregistrationv1.MutatingWebhookConfiguration), old.(*admissionregistrationv1.MutatingWebhookConfiguration)
	if !apiequality.Semantic.DeepEqual(c.Webhooks, oldC.Webhooks) {
		c.Generation = oldC.Generation + 1
	}
}

func (r mutatingWebhookRules) validate(obj runtime.Object) field.ErrorList {
	c := obj.(*admissionregistrationv1.MutatingWebhookConfiguration)
	errs := r.compilers.validateMutatingWebhookConfiguration(c, createWebhookOptions())
	return append(errs, validateStaticSuffix(c.Name)...)
}

func (r mutatingWebhookRules) validateUpdate(obj, old runtime.Object) field.ErrorList {
	c, oldC := obj.(*admissionregistrationv1.MutatingWebhookConfiguration), old.(*admissionregistrationv1.MutatingWebhookConfiguration)
	return r.compilers.validateMutatingWebhookConfiguration(c, mutatingUpdateOptions(c.Webhooks, oldC.Webhooks))
}

// validatingPolicyRules are kube's ValidatingAdmissionPolicy strategy: status is the type checker's
// and is written through /status only.
type validatingPolicyRules struct {
	admissionKind
	compilers *celCompilers
}

func (validatingPolicyRules) setDefaults(obj runtime.Object) {
	p := obj.(*admissionregistrationv1.ValidatingAdmissionPolicy)
	if p.Spec.FailurePolicy == nil {
		p.Spec.FailurePolicy = pointerTo(admissionregistrationv1.Fail)
	}
	defaultMatchResources(p.Spec.MatchConstraints)
}

func (r validatingPolicyRules) prepareCreate(obj runtime.Object) {
	r.setDefaults(obj)
	p := obj.(*admissionregistrationv1.ValidatingAdmissionPolicy)
	p.Status = admissionregistrationv1.ValidatingAdmissionPolicyStatus{}
	p.Generation = 1
}

func (r validatingPolicyRules) prepareUpdate(obj, old runtime.Object) {
	r.setDefaults(obj)
	p, oldP := obj.(*admissionregistrationv1.ValidatingAdmissionPolicy), old.(*admissionregistrationv1.ValidatingAdmissionPolicy)
	p.Status = oldP.Status
	if !apiequality.Semantic.DeepEqual(p.Spec, oldP.Spec) {
		p.Generation = oldP.Generation + 1
	}
}

func (r validatingPolicyRules) validate(obj runtime.Object) field.ErrorList {
	p := obj.(*admissionregistrationv1.ValidatingAdmissionPolicy)
	errs := r.compilers.validateValidatingPolicy(p, policyOptions{})
	return append(errs, validateStaticSuffix(p.Name)...)
}

func (r validatingPolicyRules) validateUpdate(obj, old runtime.Object) field.ErrorList {
	p, oldP := obj.(*admissionregistrationv1.ValidatingAdmissionPolicy), old.(*admissionregistrationv1.ValidatingAdmissionPolicy)
	return r.compilers.validateValidatingPolicy(p, policyOptions{
		ignoreMatchConditions: apiequality.Semantic.DeepEqual(p.Spec.ParamKind, oldP.Spec.ParamKind) &&
			apiequality.Semantic.DeepEqual(p.Spec.MatchConditions, oldP.Spec.MatchConditions),
		preexisting: validatingPolicyExpressions(oldP),
	})
}

// validateStatusUpdate is kube's ValidateValidatingAdmissionPolicyStatusUpdate.
func (validatingPolicyRules) validateStatusUpdate(obj, _ runtime.Object) field.ErrorList {
	return validateValidatingPolicyStatus(&obj.(*admissionregistrationv1.ValidatingAdmissionPolicy).Status, field.NewPath("status"))
}

// statusUpdate keeps everything of old but the status: kube's status strategy takes the spec and
// the user-settable metadata (labels, annotations, finalizers, owners) from the stored object.
func (validatingPolicyRules) statusUpdate(obj, old runtime.Object) runtime.Object {
	out := old.(*admissionregistrationv1.ValidatingAdmissionPolicy).DeepCopy()
	out.Status = obj.(*admissionregistrationv1.ValidatingAdmissionPolicy).Status
	return out
}

// validatingBindingRules are kube's ValidatingAdmissionPolicyBinding strategy.
type validatingBindingRules struct{ admissionKind }

func (validatingBindingRules) setDefaults(obj runtime.Object) {
	defaultMatchResources(obj.(*admissionregistrationv1.ValidatingAdmissionPolicyBinding).Spec.MatchResources)
}

func (r validatingBindingRules) prepareCreate(obj runtime.Object) {
	r.setDefaults(obj)
	generationOnCreate(obj)
}

func (r validatingBindingRules) prepareUpdate(obj, old runtime.Object) {
	r.setDefaults(obj)
	b, oldB := obj.(*admissionregistrationv1.ValidatingAdmissionPolicyBinding), old.(*admissionregistrationv1.ValidatingAdmissionPolicyBinding)
	if !apiequality.Semantic.DeepEqual(b.Spec, oldB.Spec) {
		b.Generation = oldB.Generation + 1
	}
}

func (validatingBindingRules) validate(obj runtime.Object) field.ErrorList {
	b := obj.(*admissionregistrationv1.ValidatingAdmissionPolicyBinding)
	errs := validateValidatingBinding(b)
	errs = append(errs, validateStaticSuffix(b.Name)...)
	return declarativeBindingErrors(errs, b)
}

func (validatingBindingRules) validateUpdate(obj, _ runtime.Object) field.ErrorList {
	b := obj.(*admissionregistrationv1.ValidatingAdmissionPolicyBinding)
	return declarativeBindingErrors(validateValidatingBinding(b), b)
}

// mutatingPolicyRules are kube's MutatingAdmissionPolicy strategy (no status subresource).
type mutatingPolicyRules struct {
	admissionKind
	compilers *celCompilers
}

func (mutatingPolicyRules) setDefaults(obj runtime.Object) {
	p := obj.(*admissionregistrationv1.MutatingAdmissionPolicy)
	if p.Spec.FailurePolicy == nil {
		p.Spec.FailurePolicy = pointerTo(admissionregistrationv1.Fail)
	}
	defaultMatchResources(p.Spec.MatchConstraints)
}

func (r mutatingPolicyRules) prepareCreate(obj runtime.Object) {
	r.setDefaults(obj)
	generationOnCreate(obj)
}

func (r mutatingPolicyRules) prepareUpdate(obj, old runtime.Object) {
	r.setDefaults(obj)
	p, oldP := obj.(*admissionregistrationv1.MutatingAdmissionPolicy), old.(*admissionregistrationv1.MutatingAdmissionPolicy)
	if !apiequality.Semantic.DeepEqual(p.Spec, oldP.Spec) {
		p.Generation = oldP.Generation + 1
	}
}

func (r mutatingPolicyRules) validate(obj runtime.Object) field.ErrorList {
	p := obj.(*admissionregistrationv1.MutatingAdmissionPolicy)
	errs := r.compilers.validateMutatingPolicy(p, policyOptions{})
	return append(errs, validateStaticSuffix(p.Name)...)
}

func (r mutatingPolicyRules) validateUpdate(obj, old runtime.Object) field.ErrorList {
	p, oldP := obj.(*admissionregistrationv1.MutatingAdmissionPolicy), old.(*admissionregistrationv1.MutatingAdmissionPolicy)
	return r.compilers.validateMutatingPolicy(p, policyOptions{
		ignoreMatchConditions: apiequality.Semantic.DeepEqual(p.Spec.ParamKind, oldP.Spec.ParamKind) &&
			apiequality.Semantic.DeepEqual(p.Spec.MatchConditions, oldP.Spec.MatchConditions),
		preexisting: mutatingPolicyExpressions(oldP),
	})
}

// mutatingBindingRules are kube's MutatingAdmissionPolicyBinding strategy.
type mutatingBindingRules struct{ admissionKind }

func (mutatingBindingRules) setDefaults(obj runtime.Object) {
	defaultMatchResources(obj.(*admissionregistrationv1.MutatingAdmissionPolicyBinding).Spec.MatchResources)
}

func (r mutatingBindingRules) prepareCreate(obj runtime.Object) {
	r.setDefaults(obj)
	generationOnCreate(obj)
}

func (r mutatingBindingRules) prepareUpdate(obj, old runtime.Object) {
	r.setDefaults(obj)
	b, oldB := obj.(*admissionregistrationv1.MutatingAdmissionPolicyBinding), old.(*admissionregistrationv1.MutatingAdmissionPolicyBinding)
	if !apiequality.Semantic.DeepEqual(b.Spec, oldB.Spec) {
		b.Generation = oldB.Generation + 1
	}
}

func (mutatingBindingRules) validate(obj runtime.Object) field.ErrorList {
	b := obj.(*admissionregistrationv1.MutatingAdmissionPolicyBinding)
	errs := validateMutatingBinding(b)
	return append(errs, validateStaticSuffix(b.Name)...)
}

func (mutatingBindingRules) validateUpdate(obj, _ runtime.Object) field.ErrorList {
	return validateMutatingBinding(obj.(*admissionregistrationv1.MutatingAdmissionPolicyBinding))
}
