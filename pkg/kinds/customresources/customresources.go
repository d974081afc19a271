// Ported from k8s.io/kubernetes v1.37.2
// staging/src/k8s.io/apiextensions-apiserver/pkg/registry/customresource/strategy.go and
// status_strategy.go (status and generation; schema validation is pkg/registry/crschema's).

// Package customresources describes the resources that CustomResourceDefinitions define. Their
// descriptor is built at runtime, from the route-model entry pkg/routes makes of a CRD version, as
// apiextensions-apiserver builds a strategy for each CRD it serves. What a CRD's schema adds (pruning,
// defaults, validation, CEL rules) is pkg/registry/crschema's, run by the handlers.
package customresources

import (
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apictl/apictl/pkg/kinds"
	"github.com/apictl/apictl/pkg/routes/model"
)

// Kind describes res, a custom resource served at group/version. Its route-model entry is complete
// already: pkg/routes derived the list kind and storageVersionHash from the CRD.
func Kind(group, version string, res model.Resource) kinds.Kind {
	_, hasStatus := res.Subresource("status")
	return kinds.Kind{
		Group:    group,
		Version:  version,
		Resource: res,
		Strategy: strategy{hasStatus: hasStatus},
		// kube refuses unconditional updates of custom resources.
		Store: kinds.StoreRules{RequireResourceVersion: true},
		Upstream: []kinds.Upstream{{Path: "staging/src/k8s.io/apiextensions-apiserver/pkg/registry/customresource/strategy.go",
			Version: "v1.37.2", Parts: "customResourceStrategy and statusStrategy (status and generation)"}},
	}
}

// strategy is apiextensions-apiserver's for custom resources: with a status subresource, a write to
// the main resource cannot set status; the generation counts changes outside metadata, status
// included when the CRD has no status subresource.
type strategy struct {
	hasStatus bool
}

func (c strategy) PrepareForCreate(obj runtime.Object) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	if c.hasStatus {
		delete(u.Object, "status")
	}
	u.SetGeneration(1)
}

// PrepareForUpdate keeps the stored status when the status subresource owns it, and moves the
// generation on (from the stored one, which the generic update rules have already set) when anything
// but metadata changed, as kube compares copyNonMetadata of both.
func (c strategy) PrepareForUpdate(obj, old runtime.Object) {
	u, ok1 := obj.(*unstructured.Unstructured)
	o, ok2 := old.(*unstructured.Unstructured)
	if !ok1 || !ok2 {
		return
	}
	if c.hasStatus {
		copyStatus(u, o)
	}
	if changedBesidesMetadata(u, o) {
		u.SetGeneration(o.GetGeneration() + 1)
	}
}

// Validate and ValidateUpdate check nothing beyond metadata: schema validation is crschema's.
func (strategy) Validate(runtime.Object) field.ErrorList                       { return nil }
func (strategy) ValidateUpdate(runtime.Object, runtime.Object) field.ErrorList { return nil }

// PrepareForStatusUpdate is the stored object with only its status replaced: everything else,
// metadata included, comes from old.
func (strategy) PrepareForStatusUpdate(obj, old runtime.Object) runtime.Object {
	u, ok1 := obj.(*unstructured.Unstructured)
	o, ok2 := old.(*unstructured.Unstructured)
	if !ok1 || !ok2 {
		return obj
	}
	out := o.DeepCopy()
	copyStatus(out, u)
	return out
}

func (strategy) ValidateStatusUpdate(runtime.Object, runtime.Object) field.ErrorList { return nil }

// copyStatus sets the status of to to that of from (shared, not copied deeply), removing it when from
// has none.
func copyStatus(to, from *unstructured.Unstructured) {
	if status, found := from.Object["status"]; found {
		to.Object["status"] = status
	} else {
		delete(to.Object, "status")
	}
}

// changedBesidesMetadata reports whether anything outside metadata differs.
func changedBesidesMetadata(u, o *unstructured.Unstructured) bool {
	for k, v := range u.Object {
		if k == "metadata" {
			continue
		}
		if !reflect.DeepEqual(v, o.Object[k]) {
			return true
		}
	}
	for k := range o.Object {
		if k == "metadata" {
			continue
		}
		if _, ok := u.Object[k]; !ok {
			return true
		}
	}
	return false
}
