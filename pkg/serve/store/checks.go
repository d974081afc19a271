package store

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apictl/apictl/pkg/registry"
	"github.com/apictl/apictl/pkg/registry/crschema"
)

// checks are the rules a route's writes are validated by, and the defaults of the objects admission
// plugins make, chosen once when the route is installed (New): a kind's strategy, at the resource,
// its status or another subresource it writes; or a custom resource's schema.
type checks interface {
	validateCreate(ctx context.Context, obj runtime.Object, name string) error
	validateUpdate(ctx context.Context, obj, old runtime.Object) error
	// defaults applies the route kind's defaults to an object; nil when the route has none to apply.
	defaults() func(runtime.Object)
}

func newChecks(r *Resource) checks {
	strategy := strategyChecks{strategy: r.Strategy, update: func(obj, old runtime.Object) error { return r.Strategy.ValidateUpdate(obj, old) }}
	switch {
	case r.Sub != nil && r.Sub.Name == "status":
		strategy.update = func(obj, old runtime.Object) error { return r.Strategy.ValidateStatusUpdate(obj, old) }
	case r.Sub != nil && r.Strategy != nil && r.Strategy.WritesSubresource(r.Sub.Name):
		name := r.Sub.Name
		strategy.update = func(obj, old runtime.Object) error { return r.Strategy.ValidateSubresourceUpdate(name, obj, old) }
	}
	if r.Strategy != nil && !r.IsScale() {
		strategy.defaulter = r.Strategy.Default
	}
	if r.Crv != nil {
		return schemaChecks{crv: r.Crv, gvk: r.ObjectGVK, status: r.Sub != nil && r.Sub.Name == "status", typed: strategy}
	}
	return strategy
}

// strategyChecks are a built-in kind's, from its strategy.
type strategyChecks struct {
	strategy  *registry.Strategy
	update    func(obj, old runtime.Object) error
	defaulter func(runtime.Object)
}

func (c strategyChecks) validateCreate(_ context.Context, obj runtime.Object, _ string) error {
	return c.strategy.ValidateCreate(obj)
}

func (c strategyChecks) validateUpdate(_ context.Context, obj, old runtime.Object) error {
	return c.update(obj, old)
}

func (c strategyChecks) defaults() func(runtime.Object) { return c.defaulter }

// schemaChecks are a custom resource's, from its CRD's schema (which includes the metadata rules).
type schemaChecks struct {
	crv *crschema.Validator
	gvk schema.GroupVersionKind
	// status is set on the status subresource, whose writes the schema checks as status updates.
	status bool
	// typed checks what is not a custom resource: a Scale written through the scale subresource.
	typed strategyChecks
}

func (c schemaChecks) validateCreate(ctx context.Context, obj runtime.Object, name string) error {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return c.typed.validateCreate(ctx, obj, name)
	}
	return c.crv.InvalidObject(u, name, c.crv.Validate(ctx, u))
}

func (c schemaChecks) validateUpdate(ctx context.Context, obj, old runtime.Object) error {
	u, ok1 := obj.(*unstructured.Unstructured)
	o, ok2 := old.(*unstructured.Unstructured)
	switch {
	case !ok1 || !ok2:
		return c.typed.update(obj, old)
	case c.status:
		return c.crv.Invalid(u.GetName(), c.crv.ValidateStatusUpdate(ctx, u, o))
	}
	return c.crv.InvalidObject(u, u.GetName(), c.crv.ValidateUpdate(ctx, u, o))
}

// defaults applies the schema's defaults to custom resources of the route's kind.
func (c schemaChecks) defaults() func(runtime.Object) {
	crv, gvk := c.crv, c.gvk
	return func(obj runtime.Object) {
		if u, ok := obj.(*unstructured.Unstructured); ok && u.GroupVersionKind() == gvk {
			crv.Default(u)
		}
	}
}
