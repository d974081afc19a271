package patch

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apictl/apictl/pkg/registry"
)

// kind is the Go side of the objects one target reads and writes: a k8s.io/api type for built-in
// kinds, Unstructured for custom resources. It plays the scheme's roles for the field manager
// (creater, convertor and defaulter) for that one kind, which is all a server without internal
// versions and conversion webhooks needs.
type kind struct {
	gvk schema.GroupVersionKind
	// goType is the struct type; nil for unstructured objects.
	goType reflect.Type
}

var (
	_ runtime.ObjectCreater   = kind{}
	_ runtime.ObjectConvertor = kind{}
	_ runtime.ObjectDefaulter = kind{}
)

// typed reports whether objects are Go structs rather than Unstructured.
func (k kind) typed() bool { return k.goType != nil }

// newObject returns an empty object of the kind with its apiVersion and kind set.
func (k kind) newObject() runtime.Object {
	if !k.typed() {
		u := &unstructured.Unstructured{Object: map[string]any{}}
		u.SetGroupVersionKind(k.gvk)
		return u
	}
	obj := reflect.New(k.goType).Interface().(runtime.Object)
	obj.GetObjectKind().SetGroupVersionKind(k.gvk)
	return obj
}

// New implements runtime.ObjectCreater for the field manager, which asks for the target's kind.
func (k kind) New(gvk schema.GroupVersionKind) (runtime.Object, error) {
	if gvk.GroupKind() != k.gvk.GroupKind() {
		return nil, runtime.NewNotRegisteredErrForKind("apictl", gvk)
	}
	obj := k.newObject()
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	return obj, nil
}

// Default implements runtime.ObjectDefaulter: the registry's decoding defaults of built-in kinds,
// which kube applies to a patched object before the field manager records it (and which the field
// manager applies to the result of an apply). Custom resources are defaulted from their schema by
// the handler.
func (k kind) Default(obj runtime.Object) {
	if k.typed() {
		registry.SetDefaults(obj)
	}
}

// Convert implements runtime.ObjectConvertor; the field manager only converts between versions.
func (k kind) Convert(in, out, _ any) error {
	return fmt.Errorf("converting %T to %T is not supported for %s", in, out, k.gvk)
}

// ConvertFieldLabel implements runtime.ObjectConvertor; the field manager does not use it.
func (k kind) ConvertFieldLabel(gvk schema.GroupVersionKind, label, _ string) (string, string, error) {
	return "", "", fmt.Errorf("field label %q of %s is not supported", label, gvk)
}

// ConvertToVersion implements runtime.ObjectConvertor. The field manager calls it to give objects
// their apiVersion and kind, to turn the Unstructured result of an apply back into the Go type, and
// to read managedFields entries recorded at another version of the resource. Custom resources
// convert between versions as kube's "None" strategy does, by changing apiVersion; built-in kinds
// are served at one version, so another version is reported as not registered, which makes the
// field manager drop entries it cannot read, as kube does for versions it no longer serves. The in
// object is never modified.
func (k kind) ConvertToVersion(in runtime.Object, target runtime.GroupVersioner) (runtime.Object, error) {
	inGVK := in.GetObjectKind().GroupVersionKind()
	if inGVK.Empty() {
		inGVK = k.gvk
	}
	want, ok := target.KindForGroupVersionKinds([]schema.GroupVersionKind{inGVK})
	if !ok || want.GroupKind() != k.gvk.GroupKind() {
		return nil, runtime.NewNotRegisteredErrForTarget("apictl", reflect.TypeOf(in), target)
	}
	if k.typed() && want.Version != k.gvk.Version {
		return nil, runtime.NewNotRegisteredErrForKind("apictl", want)
	}
	switch obj := in.(type) {
	case *unstructured.Unstructured:
		if !k.typed() {
			if inGVK == want && obj.GroupVersionKind() == want {
				return obj, nil
			}
			// A shallow copy: only apiVersion differs, and callers never modify the result in place.
			return k.withGVK(obj, want), nil
		}
		out := reflect.New(k.goType).Interface().(runtime.Object)
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, out); err != nil {
			return nil, fmt.Errorf("converting to %s: %w", want, err)
		}
		out.GetObjectKind().SetGroupVersionKind(want)
		return out, nil
	default:
		if !k.typed() || reflect.TypeOf(in) != reflect.PointerTo(k.goType) {
			return nil, runtime.NewNotRegisteredErrForType("apictl", reflect.TypeOf(in))
		}
		if in.GetObjectKind().GroupVersionKind() == want {
			return in, nil
		}
		return k.withGVK(in, want), nil
	}
}

// withGVK returns a shallow copy of in with apiVersion and kind set: an Unstructured's top-level map
// or a typed object's struct is copied, the maps and slices below are shared, so the copy is for
// reading only.
func (k kind) withGVK(in runtime.Object, gvk schema.GroupVersionKind) runtime.Object {
	if u, ok := in.(*unstructured.Unstructured); ok {
		out := &unstructured.Unstructured{Object: make(map[string]any, len(u.Object)+2)}
		for key, v := range u.Object {
			out.Object[key] = v
		}
		out.SetGroupVersionKind(gvk)
		return out
	}
	out := reflect.New(k.goType)
	out.Elem().Set(reflect.ValueOf(in).Elem())
	obj := out.Interface().(runtime.Object)
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	return obj
}

// forReading returns obj with the target's apiVersion and kind, copying it (shallowly) only when
// they are missing or different; the result must not be modified.
func (k kind) forReading(obj runtime.Object) runtime.Object {
	if obj.GetObjectKind().GroupVersionKind() == k.gvk {
		return obj
	}
	return k.withGVK(obj, k.gvk)
}

// check verifies that obj is of the target's Go type, so that a handler bug surfaces as a clear
// error rather than a panic deep in the merge code.
func (k kind) check(obj runtime.Object, what string) error {
	_, isU := obj.(*unstructured.Unstructured)
	switch {
	case k.typed() && reflect.TypeOf(obj) != reflect.PointerTo(k.goType):
		return fmt.Errorf("%s object is a %T, not a *%v", what, obj, k.goType)
	case !k.typed() && !isU:
		return fmt.Errorf("%s object is a %T, not an *unstructured.Unstructured", what, obj)
	}
	return nil
}
