package registry

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apictl/apictl/pkg/kinds"
)

// describedRules are the rules of a kind described in a package of its own (pkg/kinds).
type describedRules struct{ s kinds.Strategy }

// newDescribedRules adapts a kind's strategy to the registry's rules. A kind with a status
// subresource must say what a status write keeps (kinds.StatusStrategy): there is no safe default.
func newDescribedRules(k *kinds.Kind, hasStatus bool) (kindRules, error) {
	if k.Strategy == nil {
		if hasStatus {
			return nil, fmt.Errorf("kind %s has a status subresource but no strategy: describe its status writes (kinds.StatusStrategy)", k.Resource.Kind)
		}
		return noRules{}, nil
	}
	r := describedRules{k.Strategy}
	_, defaults := k.Strategy.(kinds.Defaulter)
	st, status := k.Strategy.(kinds.StatusStrategy)
	switch {
	case hasStatus && !status:
		return nil, fmt.Errorf("kind %s has a status subresource but its strategy is no kinds.StatusStrategy", k.Resource.Kind)
	case status && defaults:
		return describedStatusDefaulter{describedDefaulter{r}, statusPart{st}}, nil
	case status:
		return describedStatus{r, statusPart{st}}, nil
	case defaults:
		return describedDefaulter{r}, nil
	}
	return r, nil
}

func (r describedRules) prepareCreate(obj runtime.Object)            { r.s.PrepareForCreate(obj) }
func (r describedRules) prepareUpdate(obj, old runtime.Object)       { r.s.PrepareForUpdate(obj, old) }
func (r describedRules) validate(obj runtime.Object) field.ErrorList { return r.s.Validate(obj) }
func (r describedRules) validateUpdate(obj, old runtime.Object) field.ErrorList {
	return r.s.ValidateUpdate(obj, old)
}

// warningsOnCreate and warningsOnUpdate are the kind's warnings, when its strategy has any
// (kinds.Warner).
func (r describedRules) warningsOnCreate(obj runtime.Object) []string {
	if w, ok := r.s.(kinds.Warner); ok {
		return w.WarningsOnCreate(obj)
	}
	return nil
}

func (r describedRules) warningsOnUpdate(obj, old runtime.Object) []string {
	if w, ok := r.s.(kinds.Warner); ok {
		return w.WarningsOnUpdate(obj, old)
	}
	return nil
}

// describedDefaulter is a described kind with decoding defaults.
type describedDefaulter struct{ describedRules }

func (r describedDefaulter) setDefaults(obj runtime.Object) { r.s.(kinds.Defaulter).Default(obj) }

// statusPart is a described kind's status subresource (statusRules, statusValidator).
type statusPart struct{ st kinds.StatusStrategy }

// statusUpdate resets the server-owned metadata from old: a kind may keep the client's metadata on
// a status write, as kube's CSR status strategy does, but never these.
func (p statusPart) statusUpdate(obj, old runtime.Object) runtime.Object {
	out := p.st.PrepareForStatusUpdate(obj, old)
	keepServerMeta(out, old)
	return out
}
func (p statusPart) validateStatusUpdate(obj, old runtime.Object) field.ErrorList {
	return p.st.ValidateStatusUpdate(obj, old)
}

type describedStatus struct {
	describedRules
	statusPart
}

type describedStatusDefaulter struct {
	describedDefaulter
	statusPart
}

// noRules is for kinds with nothing beyond metadata rules.
type noRules struct{}

func (noRules) prepareCreate(runtime.Object)                                  {}
func (noRules) prepareUpdate(runtime.Object, runtime.Object)                  {}
func (noRules) validate(runtime.Object) field.ErrorList                       { return nil }
func (noRules) validateUpdate(runtime.Object, runtime.Object) field.ErrorList { return nil }

// DeleteMarker returns the kind's own delete marking (kinds.DeleteMarker), nil for a kind whose
// deletes follow the generic rules.
func (s *Strategy) DeleteMarker() kinds.DeleteMarker {
	dm, _ := s.described.(kinds.DeleteMarker)
	return dm
}
