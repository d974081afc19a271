// Package serviceaccounts is the core v1 ServiceAccount kind: its route-model entry (with the token
// subresource, which pkg/apiserver serves with the server's token issuer), store rules and printer.
// The serviceaccount-controller, which keeps a "default" ServiceAccount in every namespace, reads the
// server's watch caches and stays in pkg/controllers/serviceaccounts.
package serviceaccounts

import (
	"reflect"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apictl/apictl/pkg/kinds"
	"github.com/apictl/apictl/pkg/kinds/printers"
	"github.com/apictl/apictl/pkg/routes/model"
)

// Kind describes ServiceAccounts.
func Kind() kinds.Kind {
	return kinds.Kind{
		Group:   corev1.GroupName,
		Version: "v1",
		Resource: model.Resource{
			Plural:         "serviceaccounts",
			Singular:       "serviceaccount",
			Kind:           "ServiceAccount",
			Namespaced:     true,
			Verbs:          model.StandardVerbs(),
			ShortNames:     []string{"sa"},
			PrinterColumns: []model.PrinterColumn{model.NameColumn(), model.AgeColumn()},
			GoType:         reflect.TypeFor[corev1.ServiceAccount](),
			ListGoType:     reflect.TypeFor[corev1.ServiceAccountList](),
			// token only creates: a TokenRequest of authentication.k8s.io/v1 in, the same answered out.
			Subresources: []model.Subresource{{Name: "token", Group: authenticationv1.GroupName, Version: "v1", Kind: "TokenRequest",
				Verbs: []string{model.VerbCreate}, GoType: reflect.TypeFor[authenticationv1.TokenRequest]()}},
		},
		// kube's ServiceAccount store answers a delete with the object as it was.
		Store: kinds.StoreRules{ReturnDeletedObject: true},
		Table: &kinds.Table{
			Columns: []metav1.TableColumnDefinition{printers.NameColumn(), printers.AgeColumn()},
			Cells:   printers.Typed(cells),
		},
		Upstream: []kinds.Upstream{
			{Path: "pkg/registry/core/serviceaccount/storage/storage.go", Version: "v1.37.2", Parts: "ReturnDeletedObject"},
			{Path: "pkg/printers/internalversion/printers.go", Version: "v1.37.2", Parts: "printServiceAccount"},
		},
	}
}

// cells has no Secrets column: kube 1.37 prints none, a ServiceAccount's secrets being a legacy token
// mechanism.
func cells(sa *corev1.ServiceAccount, now time.Time) []any {
	return []any{sa.Name, printers.Age(sa.CreationTimestamp, now)}
}
