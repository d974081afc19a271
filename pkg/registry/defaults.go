//lint:file-ignore SA1019 core v1 Endpoints are deprecated in kube, which still serves them: so does apictl.

package registry

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/apictl/apictl/pkg/kinds"
	kindsbuiltin "github.com/apictl/apictl/pkg/kinds/builtin"
)

// SetDefaults applies a built-in kind's decoding defaults to obj, as kube's scheme defaulter does to
// every object it decodes, a patched one included: the patcher calls it on the result of a patch or
// an apply before it records managedFields: a described kind's (kinds.Defaulter), or those below.
// Kinds without such defaults are left as they are.
func SetDefaults(obj runtime.Object) {
	if k, ok := kindsbuiltin.LookupObject(obj); ok {
		if d, ok := k.Strategy.(kinds.Defaulter); ok {
			d.Default(obj)
		}
		return
	}
	switch obj.(type) {
	case *corev1.Service:
		serviceRules{}.setDefaults(obj)
	case *corev1.Endpoints:
		endpointsRules{}.setDefaults(obj)
	case *discoveryv1.EndpointSlice:
		endpointSliceRules{}.setDefaults(obj)
	}
}
