package rbac

import (
	"strings"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/apictl/apictl/pkg/kinds"
	"github.com/apictl/apictl/pkg/kinds/printers"
)

// bindingTable is kube's binding printer; kind names the binding in the descriptions of the subject
// columns, and the Role column has the roleRef description of the v1beta1 type, as kube words them.
func bindingTable(kind, roleRefDoc string, cells func(runtime.Object, time.Time) ([]any, error)) *kinds.Table {
	return &kinds.Table{
		Columns: []metav1.TableColumnDefinition{
			printers.NameColumn(),
			printers.Column("Role", roleRefDoc),
			printers.AgeColumn(),
			printers.Wide(printers.Column("Users", "Users in the "+kind)),
			printers.Wide(printers.Column("Groups", "Groups in the "+kind)),
			printers.Wide(printers.Column("ServiceAccounts", "ServiceAccounts in the "+kind)),
		},
		Cells: cells,
	}
}

// typedBindingCells makes the cells of a binding type from its role reference and subjects.
func typedBindingCells[T any, PT interface {
	*T
	runtime.Object
	metav1.Object
}](parts func(PT) (rbacv1.RoleRef, []rbacv1.Subject)) func(runtime.Object, time.Time) ([]any, error) {
	return printers.Typed(func(b PT, now time.Time) []any {
		ref, subjects := parts(b)
		return bindingCells(b.GetName(), ref, subjects, b.GetCreationTimestamp(), now)
	})
}

// bindingCells print the role as Kind/name and the subjects by kind, service accounts as
// namespace/name; subjects of other kinds are not shown.
func bindingCells(name string, ref rbacv1.RoleRef, subjects []rbacv1.Subject, created metav1.Time, now time.Time) []any {
	var users, groups, sas []string
	for _, s := range subjects {
		switch s.Kind {
		case rbacv1.UserKind:
			users = append(users, s.Name)
		case rbacv1.GroupKind:
			groups = append(groups, s.Name)
		case rbacv1.ServiceAccountKind:
			sas = append(sas, s.Namespace+"/"+s.Name)
		}
	}
	return []any{
		name, ref.Kind + "/" + ref.Name, printers.Age(created, now),
		strings.Join(users, ", "), strings.Join(groups, ", "), strings.Join(sas, ", "),
	}
}
