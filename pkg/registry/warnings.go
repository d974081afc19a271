package registry

import "k8s.io/apimachinery/pkg/runtime"

// warner is a kind whose rules warn about what a client wrote, as kube's strategies do with
// WarningsOnCreate and WarningsOnUpdate: deprecated fields, IP addresses in a form kube accepts only
// for compatibility. A write that passes validation sends them as Warning headers.
type warner interface {
	warningsOnCreate(obj runtime.Object) []string
	warningsOnUpdate(obj, old runtime.Object) []string
}

// WarningsOnCreate returns the kind's warnings about obj, a new object that passed validation (kube's
// store asks for them after validation, before validating admission). Nil for most kinds, and for a
// nil Strategy (custom resources have no built-in rules).
func (s *Strategy) WarningsOnCreate(obj runtime.Object) []string {
	if s == nil {
		return nil
	}
	if w, ok := s.rules.(warner); ok && s.Stored == nil {
		return w.warningsOnCreate(obj)
	}
	return nil
}

// WarningsOnUpdate returns the kind's warnings about obj, replacing old, once obj passed validation.
// Writes to the status subresource have none: kube's status strategies give none for these kinds.
func (s *Strategy) WarningsOnUpdate(obj, old runtime.Object) []string {
	if s == nil {
		return nil
	}
	if w, ok := s.rules.(warner); ok && s.Stored == nil {
		return w.warningsOnUpdate(obj, old)
	}
	return nil
}
