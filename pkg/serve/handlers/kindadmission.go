package handlers

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	kadmission "k8s.io/apiserver/pkg/admission"

	"github.com/apictl/apictl/pkg/admission"
)

// kindAdmission runs the kind's own built-in admission plugins (kinds.Kind.Admission) on a create
// or update of the kind or one of its subresources, after the kind's validation, as kube's
// validating plugins run. Kinds without any cost nothing. options may be nil.
func (s *store) kindAdmission(ctx context.Context, op kadmission.Operation, obj, old runtime.Object, options runtime.Object, dryRun bool) error {
	if s.strategy == nil || len(s.strategy.Admission()) == 0 {
		return nil
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	sub := ""
	if s.sub != nil {
		sub = s.sub.Name
	}
	a := admission.NewAttributes(admission.Request{
		Object: obj, OldObject: old, Kind: s.objectGVK, Resource: s.gvr, Subresource: sub,
		Namespace: m.GetNamespace(), Name: m.GetName(), Operation: op, Options: options, DryRun: dryRun,
		User: kubeUser(ctx),
	})
	for _, p := range s.strategy.Admission() {
		if err := p.Validate(ctx, a, s.api.cfg.Authorizer); err != nil {
			return err
		}
	}
	return nil
}
