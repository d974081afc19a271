// Package customresourcedefinitions is the apiextensions.k8s.io/v1 CustomResourceDefinition kind: its
// route-model entry, apiextensions-apiserver's strategy and validation (run on the internal type, as
// kube runs them), its table convertor and store rules. What serves the resources a CRD defines is
// pkg/apiserver's CRD controller and the handlers' extensions.
package customresourcedefinitions

import (
	"reflect"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apictl/apictl/pkg/kinds"
	"github.com/apictl/apictl/pkg/kinds/printers"
	"github.com/apictl/apictl/pkg/routes/model"
)

// Kind describes CustomResourceDefinitions: cluster-scoped, in the api-extensions category, with a
// status subresource. kube's store checks a name as a path segment; the CRD's own validation then
// requires <plural>.<group> (kinds.MetaValidator).
func Kind() kinds.Kind {
	crd := reflect.TypeFor[apiextensionsv1.CustomResourceDefinition]()
	return kinds.Kind{
		Group:   apiextensionsv1.GroupName,
		Version: "v1",
		Resource: model.Resource{
			Plural:     "customresourcedefinitions",
			Singular:   "customresourcedefinition",
			Kind:       "CustomResourceDefinition",
			Verbs:      model.StandardVerbs(),
			ShortNames: []string{"crd", "crds"},
			Categories: []string{"api-extensions"},
			PrinterColumns: []model.PrinterColumn{
				model.NameColumn(), model.ComputedColumn("Scope", "Cluster/Namespaced", 0), model.ComputedColumn("Versions", "Served versions", 0),
				model.CreatedAtColumn(), model.ComputedColumn("Group", "API group", 1), model.ComputedColumn("Kind", "CustomResource kind", 1),
				model.ComputedColumn("ShortNames", "Short names", 1),
				{Name: "Established", Type: "boolean", Description: "Established status", Priority: 1},
			},
			// kube-apiserver still encodes CRDs to etcd as v1beta1, and the hash names the storage version.
			StorageVersionHash: model.StorageVersionHash(apiextensionsv1.GroupName, "v1beta1", "CustomResourceDefinition"),
			Subresources: []model.Subresource{{Name: "status", Kind: "CustomResourceDefinition",
				Verbs: []string{model.VerbGet, model.VerbPatch, model.VerbUpdate}, GoType: crd}},
			GoType:     crd,
			ListGoType: reflect.TypeFor[apiextensionsv1.CustomResourceDefinitionList](),
		},
		NameRule: func(name string, _ bool) []string { return content.IsPathSegmentName(name) },
		Strategy: newStrategy(),
		Table: &kinds.Table{
			Columns: []metav1.TableColumnDefinition{
				printers.NameColumn(),
				printers.Column("Scope", "Cluster/Namespaced"),
				printers.Column("Versions", "Served versions"),
				{Name: "Created At", Type: "date", Description: printers.ObjectMetaDoc("creationTimestamp")},
				printers.Wide(printers.Column("Group", "API group")),
				printers.Wide(printers.Column("Kind", "CustomResource kind")),
				printers.Wide(printers.Column("ShortNames", "Short names")),
				printers.Wide(metav1.TableColumnDefinition{Name: "Established", Type: "boolean", Description: "Established status"}),
			},
			Cells:     printers.Typed(cells),
			NullEmpty: true,
		},
		// kube's CRD strategy refuses unconditional updates.
		Store: kinds.StoreRules{RequireResourceVersion: true},
		Upstream: []kinds.Upstream{
			{Path: "staging/src/k8s.io/apiextensions-apiserver/pkg/registry/customresourcedefinition/strategy.go", Version: "v1.37.2",
				Parts: "strategy and statusStrategy (PrepareForCreate, PrepareForUpdate, PrepareForUpdate of status)"},
			{Path: "staging/src/k8s.io/apiextensions-apiserver/pkg/registry/customresourcedefinition/tableconvertor/tableconvertor.go", Version: "v1.37.2",
				Parts: "the CRD table convertor"},
		},
	}
}
