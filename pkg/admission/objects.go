package admission

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// Objects are the admission.ObjectInterfaces of one resource: how the webhook plugins create,
// convert and default the objects they send and the patched objects they get back.
//
// Built-in kinds are the typed objects of k8s.io/api, known to client-go's scheme (read only here;
// the in-process clients link it in anyway). Custom resources are *unstructured.Unstructured and
// convert between their versions through Convert.
type Objects struct {
	// Mapper lists a resource's equivalents for matchPolicy Equivalent.
	Mapper runtime.EquivalentResourceMapper
	// Convert converts a custom resource to another version of its CRD; nil when the CRD has one
	// version (the only conversion then is none).
	Convert func(in *unstructured.Unstructured, to schema.GroupVersionKind) (*unstructured.Unstructured, error)
	// ConvertKind converts a built-in object to the Go type of out when the two kinds are one object
	// stored alike (events.k8s.io/v1 and core v1 Events), for matchPolicy Equivalent; nil when the
	// resource has no such twin.
	ConvertKind func(in, out runtime.Object) error
	// Default applies the kind's defaults to an object a webhook patched, as kube's defaulter does;
	// nil when the kind has none.
	Default func(runtime.Object)
}

var _ admission.ObjectInterfaces = (*Objects)(nil)

// GetObjectCreater implements admission.ObjectInterfaces.
func (o *Objects) GetObjectCreater() runtime.ObjectCreater { return creater{} }

// GetObjectTyper implements admission.ObjectInterfaces.
func (o *Objects) GetObjectTyper() runtime.ObjectTyper { return clientgoscheme.Scheme }

// GetObjectDefaulter implements admission.ObjectInterfaces.
func (o *Objects) GetObjectDefaulter() runtime.ObjectDefaulter { return defaulter{o.Default} }

// GetObjectConvertor implements admission.ObjectInterfaces.
func (o *Objects) GetObjectConvertor() runtime.ObjectConvertor {
	return convertor{convert: o.Convert, convertKind: o.ConvertKind}
}

// GetEquivalentResourceMapper implements admission.ObjectInterfaces.
func (o *Objects) GetEquivalentResourceMapper() runtime.EquivalentResourceMapper { return o.Mapper }

// creater makes the typed object of a built-in kind, and an Unstructured for any other kind (a
// custom resource), as kube's CRD handler does.
type creater struct{}

func (creater) New(gvk schema.GroupVersionKind) (runtime.Object, error) {
	if clientgoscheme.Scheme.Recognizes(gvk) {
		return clientgoscheme.Scheme.New(gvk)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

type defaulter struct{ fn func(runtime.Object) }

func (d defaulter) Default(obj runtime.Object) {
	if d.fn != nil {
		d.fn(obj)
	}
}

// convertor copies between objects of the same version (the plugins write a patched object back
// into the request's this way) and converts custom resources between versions. kube converts
// built-in kinds through their internal version; apictl has none, so a built-in kind converts only
// to itself, and a webhook asking for another version of it gets the plugin's conversion error.
type convertor struct {
	convert     func(in *unstructured.Unstructured, to schema.GroupVersionKind) (*unstructured.Unstructured, error)
	convertKind func(in, out runtime.Object) error
}

func (c convertor) Convert(in, out, context any) error {
	if ui, ok := in.(*unstructured.Unstructured); ok {
		uo, ok := out.(*unstructured.Unstructured)
		if !ok {
			return fmt.Errorf("converting a custom resource to %T: not supported", out)
		}
		to := uo.GroupVersionKind()
		if to.Empty() || to == ui.GroupVersionKind() {
			uo.SetUnstructuredContent(ui.UnstructuredContent())
			return nil
		}
		if c.convert == nil {
			return fmt.Errorf("converting %s to %s: the custom resource has no other version", ui.GroupVersionKind(), to)
		}
		converted, err := c.convert(ui, to)
		if err != nil {
			return fmt.Errorf("converting %s to %s: %w", ui.GroupVersionKind(), to, err)
		}
		uo.SetUnstructuredContent(converted.UnstructuredContent())
		return nil
	}
	vi, vo := reflect.ValueOf(in), reflect.ValueOf(out)
	if vi.Kind() == reflect.Pointer && vi.Type() == vo.Type() && !vi.IsNil() && !vo.IsNil() {
		vo.Elem().Set(vi.Elem())
		return nil
	}
	inObj, ok := in.(runtime.Object)
	outObj, ok2 := out.(runtime.Object)
	if c.convertKind != nil && ok && ok2 {
		return c.convertKind(inObj, outObj)
	}
	return fmt.Errorf("converting %T to %T: not supported", in, out)
}

func (c convertor) ConvertToVersion(in runtime.Object, gv runtime.GroupVersioner) (runtime.Object, error) {
	gvk, ok := gv.KindForGroupVersionKinds([]schema.GroupVersionKind{in.GetObjectKind().GroupVersionKind()})
	if !ok {
		return nil, fmt.Errorf("converting %T to %v: no kind", in, gv)
	}
	out, err := creater{}.New(gvk)
	if err != nil {
		return nil, err
	}
	if err := c.Convert(in, out, nil); err != nil {
		return nil, err
	}
	out.GetObjectKind().SetGroupVersionKind(gvk)
	return out, nil
}

func (convertor) ConvertFieldLabel(gvk schema.GroupVersionKind, label, value string) (string, string, error) {
	return label, value, nil
}
