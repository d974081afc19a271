package admission

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// mutatingPolicy is kube's MutatingAdmissionPolicy plugin given object interfaces that turn its
// patched objects back into typed ones.
type mutatingPolicy struct{ *mutating.Plugin }

var _ admission.MutationInterface = mutatingPolicy{}

// Admit runs the policies on a.
func (p mutatingPolicy) Admit(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	return p.Plugin.Admit(ctx, a, typedPatches{o})
}

// typedPatches are the request's object interfaces with a convertor that also turns Unstructured
// into the typed object of a built-in kind: the mutating plugin applies its patches to Unstructured
// and converts the result back to the request's type with ConvertToVersion, which kube's scheme
// does through the default unstructured converter.
type typedPatches struct{ admission.ObjectInterfaces }

func (o typedPatches) GetObjectConvertor() runtime.ObjectConvertor {
	return typedConvertor{o.ObjectInterfaces.GetObjectConvertor()}
}

type typedConvertor struct{ runtime.ObjectConvertor }

// ConvertToVersion converts an Unstructured of a built-in kind to its typed object when gv is its
// own version, and leaves everything else to the request's convertor.
func (c typedConvertor) ConvertToVersion(in runtime.Object, gv runtime.GroupVersioner) (runtime.Object, error) {
	u, ok := in.(*unstructured.Unstructured)
	if !ok {
		return c.ObjectConvertor.ConvertToVersion(in, gv)
	}
	gvk, ok := gv.KindForGroupVersionKinds([]schema.GroupVersionKind{u.GroupVersionKind()})
	if !ok || gvk != u.GroupVersionKind() || !clientgoscheme.Scheme.Recognizes(gvk) {
		return c.ObjectConvertor.ConvertToVersion(in, gv)
	}
	out, err := clientgoscheme.Scheme.New(gvk)
	if err != nil {
		return nil, fmt.Errorf("converting the patched %s to its type: %w", gvk, err)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.UnstructuredContent(), out); err != nil {
		return nil, fmt.Errorf("converting the patched %s to its type: %w", gvk, err)
	}
	out.GetObjectKind().SetGroupVersionKind(gvk)
	return out, nil
}
