package registry

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// builtinRules returns the rules of a built-in kind and, when it differs from DNS subdomains, its
// name rule.
func builtinRules(gvk schema.GroupVersionKind) (kindRules, apivalidation.ValidateNameFunc, bool, error) {
	if gvk == apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition") {
		// kube's store checks the name as a path segment; the CRD's own validation then requires
		// <plural>.<group>.
		rules, err := newCRDRules()
		return rules, rbacName, err == nil, err
	}
	if gvk == apiregistrationv1.SchemeGroupVersion.WithKind("APIService") {
		// The name is checked as a path segment ("v1." is the core group's), then as <version>.<group>.
		rules, err := newAPIServiceRules()
		return rules, rbacName, err == nil, err
	}
	if rules, ok := admissionRegistrationRules(gvk); ok {
		return rules, nil, true, nil
	}
	rules, nameFn, ok := coreRules(gvk)
	return rules, nameFn, ok, nil
}

// coreRules returns the rules of the kinds of k8s.io/api.
func coreRules(gvk schema.GroupVersionKind) (kindRules, apivalidation.ValidateNameFunc, bool) {
	switch gvk {
	case corev1.SchemeGroupVersion.WithKind("Namespace"):
		return namespaceRules{}, apivalidation.NameIsDNSLabel, true
	case corev1.SchemeGroupVersion.WithKind("Event"):
		// kube's store checks event names as path segments only (eventRules, events.go).
		return eventRules{}, rbacName, true
	case eventsv1.SchemeGroupVersion.WithKind("Event"):
		return eventRules{strict: true}, rbacName, true
	}
	return nil, nil, false
}

// noRules is for kinds with nothing beyond metadata rules.
type noRules struct{}

func (noRules) prepareCreate(runtime.Object)                                  {}
func (noRules) prepareUpdate(runtime.Object, runtime.Object)                  {}
func (noRules) validate(runtime.Object) field.ErrorList                       { return nil }
func (noRules) validateUpdate(runtime.Object, runtime.Object) field.ErrorList { return nil }

// namespaceRules: a new namespace is Active with the kubernetes finalizer; updates of the main resource
// keep status, as kube's namespace strategy does.
type namespaceRules struct{}

func (namespaceRules) prepareCreate(obj runtime.Object) {
	ns := obj.(*corev1.Namespace)
	ns.Status = corev1.NamespaceStatus{Phase: corev1.NamespaceActive}
	if len(ns.Spec.Finalizers) == 0 {
		ns.Spec.Finalizers = []corev1.FinalizerName{corev1.FinalizerKubernetes}
	}
	// Again after decoding: a generated name was not known then. kube's strategy does the same in
	// Canonicalize.
	setNameLabel(ns)
}

func (namespaceRules) prepareUpdate(obj, old runtime.Object) {
	ns, oldNS := obj.(*corev1.Namespace), old.(*corev1.Namespace)
	ns.Status = oldNS.Status
	// Finalizers are changed through /finalize only.
	ns.Spec.Finalizers = oldNS.Spec.Finalizers
	setNameLabel(ns)
}

// setDefaults labels a namespace with its name and makes an unset phase Active as it is decoded, as
// kube's defaulting does, so that the label is the writer's in managedFields.
func (namespaceRules) setDefaults(obj runtime.Object) {
	ns := obj.(*corev1.Namespace)
	if ns.Name != "" {
		setNameLabel(ns)
	}
	if ns.Status.Phase == "" {
		ns.Status.Phase = corev1.NamespaceActive
	}
}

// setNameLabel sets kubernetes.io/metadata.name, which selectors such as a NetworkPolicy's
// namespaceSelector rely on; the server owns it, so a write cannot change or remove it.
func setNameLabel(ns *corev1.Namespace) {
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	ns.Labels[corev1.LabelMetadataName] = ns.Name
}

func (namespaceRules) validate(obj runtime.Object) field.ErrorList {
	ns := obj.(*corev1.Namespace)
	var errs field.ErrorList
	for i, f := range ns.Spec.Finalizers {
		errs = append(errs, apivalidation.ValidateFinalizerName(string(f), field.NewPath("spec", "finalizers").Index(i))...)
	}
	return errs
}

func (r namespaceRules) validateUpdate(obj, _ runtime.Object) field.ErrorList { return r.validate(obj) }

// validateStatusUpdate allows the phase that goes with the deletionTimestamp, as kube does.
func (namespaceRules) validateStatusUpdate(obj, _ runtime.Object) field.ErrorList {
	ns := obj.(*corev1.Namespace)
	phase := field.NewPath("status", "Phase")
	switch {
	case ns.DeletionTimestamp.IsZero() && ns.Status.Phase != corev1.NamespaceActive:
		return field.ErrorList{field.Invalid(phase, ns.Status.Phase, "may only be 'Active' if `deletionTimestamp` is empty")}
	case !ns.DeletionTimestamp.IsZero() && ns.Status.Phase != corev1.NamespaceTerminating:
		return field.ErrorList{field.Invalid(phase, ns.Status.Phase, "may only be 'Terminating' if `deletionTimestamp` is not empty")}
	}
	return nil
}

// statusUpdate keeps the spec of old and what only the server sets, as kube's namespace status
// strategy does (k8s.io/kubernetes v1.37.2 pkg/registry/core/namespace/strategy.go resets only the
// spec): a status write, a server-side apply included, may change labels and annotations.
func (namespaceRules) statusUpdate(obj, old runtime.Object) runtime.Object {
	out, oldNS := obj.(*corev1.Namespace).DeepCopy(), old.(*corev1.Namespace)
	prepareMetaForUpdate(out, oldNS)
	out.Spec = oldNS.Spec
	setNameLabel(out)
	return out
}

// FinalizeUpdate keeps everything of old but spec.finalizers, as a write to namespaces/{name}/finalize
// does.
func FinalizeUpdate(obj, old runtime.Object) (runtime.Object, error) {
	ns, ok := obj.(*corev1.Namespace)
	oldNS, ok2 := old.(*corev1.Namespace)
	if !ok || !ok2 {
		return nil, fmt.Errorf("finalize applies to namespaces, not %T", obj)
	}
	out := oldNS.DeepCopy()
	out.Spec.Finalizers = ns.Spec.Finalizers
	out.ManagedFields = ns.ManagedFields
	return out, nil
}
