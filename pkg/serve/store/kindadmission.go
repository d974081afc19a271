package store

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
func (s *Store) kindAdmission(ctx context.Context, op kadmission.Operation, obj, old runtime.Object, options runtime.Object, dryRun bool) error {
	if s.Strategy == nil || len(s.Strategy.Admission()) == 0 {
		return nil
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	sub := ""
	if s.Sub != nil {
		sub = s.Sub.Name
	}
	a := admission.NewAttributes(admission.Request{
		Object: obj, OldObject: old, Kind: s.ObjectGVK, Resource: s.GVR, Subresource: sub,
		Namespace: m.GetNamespace(), Name: m.GetName(), Operation: op, Options: options, DryRun: dryRun,
		User: kubeUser(ctx),
	})
	for _, p := range s.Strategy.Admission() {
		if err := p.Validate(ctx, a, s.env.Authorizer); err != nil {
			return err
		}
	}
	return nil
}
