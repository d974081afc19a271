package registry

import (
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
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
	rules, nameFn, ok := coreRules(gvk)
	return rules, nameFn, ok, nil
}

// coreRules returns the rules of the kinds of k8s.io/api.
func coreRules(gvk schema.GroupVersionKind) (kindRules, apivalidation.ValidateNameFunc, bool) {
	switch gvk {
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
