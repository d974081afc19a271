package registry

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apictl/apictl/pkg/kinds"
)

// legacyStoreRules are kube's store settings for the kinds that have no package of their own yet
// (pkg/kinds); each moves into its kind's descriptor when the kind moves.
func legacyStoreRules(gr schema.GroupResource, custom bool) kinds.StoreRules {
	var r kinds.StoreRules
	switch gr {
	case schema.GroupResource{Resource: "events"}, schema.GroupResource{Group: "events.k8s.io", Resource: "events"}:
		// events.k8s.io events are core events, with the same strategy: PUT creates them, and the
		// garbage collector never handles them.
		r.DeletePolicy = kinds.Unsupported
		r.AllowCreateOnUpdate = true
	case schema.GroupResource{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"}:
		r.RequireResourceVersion = true
	}
	// kube refuses unconditional updates of custom resources.
	if custom {
		r.RequireResourceVersion = true
	}
	return r
}
