package rbac

import (
	"context"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/apictl/apictl/pkg/serve/auth"
	"github.com/apictl/apictl/pkg/serve/request"
)

// The allow reasons are kube-apiserver v1.37.2's for the same bindings.
func TestAuthorizeExplained(t *testing.T) {
	o := newObjects()
	o.clusterRoles["edit"] = &rbacv1.ClusterRole{ObjectMeta: objMeta("", "edit"), Rules: []rbacv1.PolicyRule{
		{Verbs: []string{"*"}, APIGroups: []string{""}, Resources: []string{"configmaps"}}}}
	o.clusterRoles["viewer"] = &rbacv1.ClusterRole{ObjectMeta: objMeta("", "viewer"), Rules: []rbacv1.PolicyRule{
		{Verbs: []string{"get"}, NonResourceURLs: []string{"/version"}}}}
	o.roles["a/pods"] = &rbacv1.Role{ObjectMeta: objMeta("team-a", "pods"), Rules: []rbacv1.PolicyRule{
		{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}}}
	o.roleBindings["a/edit"] = &rbacv1.RoleBinding{ObjectMeta: objMeta("team-a", "dev-edit"),
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, Name: "dev"}}}
	o.roleBindings["a/pods"] = &rbacv1.RoleBinding{ObjectMeta: objMeta("team-a", "pods"),
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "pods"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "builder"}}}
	o.clusterRoleBindings["viewer"] = &rbacv1.ClusterRoleBinding{ObjectMeta: objMeta("", "system:public-info-viewer"),
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "viewer"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, Name: request.GroupAuthenticated}}}
	o.clusterRoleBindings["gone"] = &rbacv1.ClusterRoleBinding{ObjectMeta: objMeta("", "gone"),
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "gone"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "alice"}}}
	a := &Authorizer{policy: testPolicy(o)}
	alice := &request.User{Name: "alice", Groups: []string{"dev", request.GroupAuthenticated}}
	builder := &request.User{Name: "system:serviceaccount:team-a:builder"}

	tests := []struct {
		name   string
		user   *request.User
		info   *request.RequestInfo
		want   auth.Decision
		reason string
	}{
		{"role binding of a cluster role", alice, res("create", "", "configmaps", "", "team-a", ""), auth.Allow,
			`RBAC: allowed by RoleBinding "dev-edit/team-a" of ClusterRole "edit" to Group "dev"`},
		{"cluster role binding", alice, nonRes("get", "/version"), auth.Allow,
			`RBAC: allowed by ClusterRoleBinding "system:public-info-viewer" of ClusterRole "viewer" to Group "system:authenticated"`},
		{"service account", builder, res("get", "", "pods", "", "team-a", "p"), auth.Allow,
			`RBAC: allowed by RoleBinding "pods/team-a" of Role "pods" to ServiceAccount "builder/team-a"`},
		{"denied keeps the denial's reason", alice, res("get", "", "secrets", "", "team-a", ""), auth.NoOpinion,
			`RBAC: clusterrole.rbac.authorization.k8s.io "gone" not found`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, reason, err := a.AuthorizeExplained(context.Background(), tt.user, tt.info)
			if err != nil || d != tt.want || reason != tt.reason {
				t.Errorf("got %v %q %v, want %v %q", d, reason, err, tt.want, tt.reason)
			}
		})
	}

	rules, err := a.RulesFor(context.Background(), alice, "team-a")
	if len(rules.Resource) != 1 || rules.Resource[0].Resources[0] != "configmaps" || len(rules.NonResource) != 1 ||
		rules.NonResource[0].NonResourceURLs[0] != "/version" || rules.Incomplete {
		t.Errorf("rules %+v", rules)
	}
	if err == nil || err.Error() != `clusterrole.rbac.authorization.k8s.io "gone" not found` {
		t.Errorf("evaluation error %v", err)
	}
}
