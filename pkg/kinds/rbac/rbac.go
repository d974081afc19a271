// Package rbac is rbac.authorization.k8s.io/v1's four kinds, which share their rules: Roles and
// ClusterRoles (policy rules, a ClusterRole's aggregation rule), RoleBindings and
// ClusterRoleBindings (roleRef and subjects, with their decoding defaults). The authorizer that reads
// them is pkg/serve/auth/rbac; the clusterrole-aggregation controller is
// pkg/controllers/clusterroleaggregation.
package rbac

import (
	"reflect"

	rbacv1 "k8s.io/api/rbac/v1"
	rbacv1beta1 "k8s.io/api/rbac/v1beta1"
	"k8s.io/apimachinery/pkg/api/validate/content"

	"github.com/apictl/apictl/pkg/kinds"
	"github.com/apictl/apictl/pkg/routes/model"
)

// Name allows what kube allows for RBAC objects: any valid path segment (system:controller:x).
func Name(name string, _ bool) []string { return content.IsPathSegmentName(name) }

// kube's RBAC strategies let a PUT create (AllowCreateOnUpdate), which kubectl auth reconcile uses.
var storeRules = kinds.StoreRules{AllowCreateOnUpdate: true}

var upstream = []kinds.Upstream{
	{Path: "pkg/apis/rbac/validation/validation.go", Version: "v1.37.2", Parts: "ValidateRole, ValidateClusterRole, ValidateRoleBinding, ValidateClusterRoleBinding, ValidatePolicyRule, ValidateRoleBindingSubject"},
	{Path: "pkg/apis/rbac/v1/defaults.go", Version: "v1.37.2", Parts: "SetDefaults_RoleBinding, SetDefaults_ClusterRoleBinding, SetDefaults_Subject"},
}

// RoleKind describes Roles. kube has no printer for roles: they get its default NAME and CREATED AT.
func RoleKind() kinds.Kind {
	return kinds.Kind{
		Group: rbacv1.GroupName, Version: "v1",
		Resource: model.Resource{Plural: "roles", Singular: "role", Kind: "Role", Namespaced: true, Verbs: model.StandardVerbs(),
			PrinterColumns: []model.PrinterColumn{model.NameColumn(), model.CreatedAtColumn()},
			GoType:         reflect.TypeFor[rbacv1.Role](), ListGoType: reflect.TypeFor[rbacv1.RoleList]()},
		NameRule: Name, Strategy: roleStrategy{namespaced: true}, Store: storeRules, Upstream: upstream,
	}
}

// ClusterRoleKind describes ClusterRoles.
func ClusterRoleKind() kinds.Kind {
	return kinds.Kind{
		Group: rbacv1.GroupName, Version: "v1",
		Resource: model.Resource{Plural: "clusterroles", Singular: "clusterrole", Kind: "ClusterRole", Verbs: model.StandardVerbs(),
			PrinterColumns: []model.PrinterColumn{model.NameColumn(), model.CreatedAtColumn()},
			GoType:         reflect.TypeFor[rbacv1.ClusterRole](), ListGoType: reflect.TypeFor[rbacv1.ClusterRoleList]()},
		NameRule: Name, Strategy: roleStrategy{}, Store: storeRules, Upstream: upstream,
	}
}

// RoleBindingKind describes RoleBindings.
func RoleBindingKind() kinds.Kind {
	return kinds.Kind{
		Group: rbacv1.GroupName, Version: "v1",
		Resource: bindingResource("rolebindings", "rolebinding", "RoleBinding", true, rbacv1.RoleBinding{}.SwaggerDoc(),
			reflect.TypeFor[rbacv1.RoleBinding](), reflect.TypeFor[rbacv1.RoleBindingList]()),
		NameRule: Name, Strategy: bindingStrategy{namespaced: true}, Store: storeRules, Upstream: upstream,
		Table: bindingTable("roleBinding", rbacv1beta1.RoleBinding{}.SwaggerDoc()["roleRef"], typedBindingCells(func(rb *rbacv1.RoleBinding) (rbacv1.RoleRef, []rbacv1.Subject) { return rb.RoleRef, rb.Subjects })),
	}
}

// ClusterRoleBindingKind describes ClusterRoleBindings.
func ClusterRoleBindingKind() kinds.Kind {
	return kinds.Kind{
		Group: rbacv1.GroupName, Version: "v1",
		Resource: bindingResource("clusterrolebindings", "clusterrolebinding", "ClusterRoleBinding", false, rbacv1.ClusterRoleBinding{}.SwaggerDoc(),
			reflect.TypeFor[rbacv1.ClusterRoleBinding](), reflect.TypeFor[rbacv1.ClusterRoleBindingList]()),
		NameRule: Name, Strategy: bindingStrategy{}, Store: storeRules, Upstream: upstream,
		Table: bindingTable("clusterRoleBinding", rbacv1beta1.ClusterRoleBinding{}.SwaggerDoc()["roleRef"], typedBindingCells(func(rb *rbacv1.ClusterRoleBinding) (rbacv1.RoleRef, []rbacv1.Subject) {
			return rb.RoleRef, rb.Subjects
		})),
	}
}

// bindingResource is a binding's route-model entry. Discovery's column descriptions say
// "roleBinding" for both kinds, as kube's do.
func bindingResource(plural, singular, kind string, namespaced bool, doc map[string]string, obj, list reflect.Type) model.Resource {
	return model.Resource{Plural: plural, Singular: singular, Kind: kind, Namespaced: namespaced, Verbs: model.StandardVerbs(),
		PrinterColumns: []model.PrinterColumn{
			model.NameColumn(), model.ComputedColumn("Role", doc["roleRef"], 0), model.AgeColumn(),
			model.ComputedColumn("Users", "Users in the roleBinding", 1),
			model.ComputedColumn("Groups", "Groups in the roleBinding", 1),
			model.ComputedColumn("ServiceAccounts", "ServiceAccounts in the roleBinding", 1),
		},
		GoType: obj, ListGoType: list}
}
