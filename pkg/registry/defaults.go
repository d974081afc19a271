package registry

import (
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/apictl/apictl/pkg/kinds"
	kindsbuiltin "github.com/apictl/apictl/pkg/kinds/builtin"
)

// SetDefaults applies a built-in kind's decoding defaults to obj, as kube's scheme defaulter does to
// every object it decodes, a patched one included: the patcher calls it on the result of a patch or
// an apply before it records managedFields: a described kind's (kinds.Defaulter). Other kinds are
// left as they are.
func SetDefaults(obj runtime.Object) {
	if k, ok := kindsbuiltin.LookupObject(obj); ok {
		if d, ok := k.Strategy.(kinds.Defaulter); ok {
			d.Default(obj)
		}
	}
}
