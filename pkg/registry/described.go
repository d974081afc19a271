package registry

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apictl/apictl/pkg/kinds"
)

// describedRules are the rules of a kind described in a package of its own (pkg/kinds).
type describedRules struct{ s kinds.Strategy }

func newDescribedRules(k *kinds.Kind) kindRules {
	if k.Strategy == nil {
		return noRules{}
	}
	if _, ok := k.Strategy.(kinds.Defaulter); ok {
		return describedDefaulter{describedRules{k.Strategy}}
	}
	return describedRules{k.Strategy}
}

func (r describedRules) prepareCreate(obj runtime.Object)            { r.s.PrepareForCreate(obj) }
func (r describedRules) prepareUpdate(obj, old runtime.Object)       { r.s.PrepareForUpdate(obj, old) }
func (r describedRules) validate(obj runtime.Object) field.ErrorList { return r.s.Validate(obj) }
func (r describedRules) validateUpdate(obj, old runtime.Object) field.ErrorList {
	return r.s.ValidateUpdate(obj, old)
}

// describedDefaulter is a described kind with decoding defaults.
type describedDefaulter struct{ describedRules }

func (r describedDefaulter) setDefaults(obj runtime.Object) { r.s.(kinds.Defaulter).Default(obj) }
