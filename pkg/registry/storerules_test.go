package registry

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apictl/apictl/internal/golden"
	"github.com/apictl/apictl/pkg/kinds"
	"github.com/apictl/apictl/pkg/routes"
)

var deletePolicies = map[kinds.DeletePolicy]string{
	kinds.DeleteDependents: "Background", kinds.OrphanDependents: "Orphan", kinds.Unsupported: "none",
}

// TestStoreRulesOfBuiltinKinds pins the generic store's settings of every built-in resource, as
// kube's strategies and stores have them, whether a kind's package (kinds.Kind.Store) or the
// registry's table says them: a kind moved into a package of its own must keep them.
func TestStoreRulesOfBuiltinKinds(t *testing.T) {
	api := routes.Builtin()
	r, err := New(api)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, g := range api.Groups() {
		for _, v := range g.Versions {
			for _, res := range v.Resources {
				gvr := schema.GroupVersionResource{Group: g.Name, Version: v.Name, Resource: res.Plural}
				s, ok := r.Strategy(gvr)
				if !ok {
					continue // the review APIs store nothing
				}
				st := s.StoreRules()
				fmt.Fprintf(&b, "%s: deletePolicy=%s createOnUpdate=%t requireResourceVersion=%t returnDeletedObject=%t\n",
					gvr.GroupResource(), deletePolicies[st.DeletePolicy], st.AllowCreateOnUpdate, st.RequireResourceVersion, st.ReturnDeletedObject)
			}
		}
	}
	golden.Check(t, "storerules.txt", b.String())
}
