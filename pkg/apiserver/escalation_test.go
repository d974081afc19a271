package apiserver_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/apictl/apictl/internal/servertest"
)

func TestRBACEscalationPrevention(t *testing.T) {
	s := servertest.Start(t, "--authorization-mode", "RBAC")
	ctx := context.Background()
	admin := adminClient(t, s)
	alice, _ := clientFor(t, s, "alice", "dev")
	mustCreate(t, admin.CoreV1().Namespaces().Create, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}})
	mustCreate(t, admin.RbacV1().ClusterRoles().Create, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "powerful"},
		Rules: []rbacv1.PolicyRule{
			{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"secrets"}},
			{Verbs: []string{"*"}, APIGroups: []string{""}, Resources: []string{"configmaps"}},
			{Verbs: []string{"delete"}, APIGroups: []string{"apps"}, Resources: []string{"deployments"}},
		}})
	// alice manages roles and bindings in team-a and edits configmaps there, nothing more.
	mustCreate(t, admin.RbacV1().Roles("team-a").Create, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "delegate"},
		Rules: []rbacv1.PolicyRule{
			// Not "*": that would include escalate and bind.
			{Verbs: []string{"get", "list", "create", "update", "patch"}, APIGroups: []string{rbacv1.GroupName}, Resources: []string{"roles", "rolebindings"}},
			{Verbs: []string{"*"}, APIGroups: []string{""}, Resources: []string{"configmaps"}},
		}})
	mustCreate(t, admin.RbacV1().RoleBindings("team-a").Create, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "delegate"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "delegate"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "dev"}}})
	eventually(t, "alice's delegation applies", func() error {
		_, err := alice.RbacV1().Roles("team-a").List(ctx, metav1.ListOptions{})
		return err
	})

	binding := func(name, kind, role string) *rbacv1.RoleBinding {
		return &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: role},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}}}
	}
	role := func(name string, rules ...rbacv1.PolicyRule) *rbacv1.Role {
		return &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}
	}
	const held = `user "alice" (groups=["dev" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:`

	_, err := alice.RbacV1().RoleBindings("team-a").Create(ctx, binding("escalate", "ClusterRole", "powerful"), metav1.CreateOptions{})
	forbidden(t, err, `rolebindings.rbac.authorization.k8s.io "escalate" is forbidden: `+held+"\n"+
		`{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}`+"\n"+
		`{APIGroups:["apps"], Resources:["deployments"], Verbs:["delete"]}`)

	_, err = alice.RbacV1().Roles("team-a").Create(ctx, role("secrets", rbacv1.PolicyRule{Verbs: []string{"get"},
		APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"a", "b"}}), metav1.CreateOptions{})
	forbidden(t, err, `roles.rbac.authorization.k8s.io "secrets" is forbidden: `+held+"\n"+
		`{APIGroups:[""], Resources:["secrets"], ResourceNames:["a"], Verbs:["get"]}`+"\n"+
		`{APIGroups:[""], Resources:["secrets"], ResourceNames:["b"], Verbs:["get"]}`)

	_, err = alice.RbacV1().RoleBindings("team-a").Create(ctx, binding("nothing", "ClusterRole", "nothing"), metav1.CreateOptions{})
	if !apierrors.IsNotFound(err) || err.Error() != `rolebindings.rbac.authorization.k8s.io "nothing" not found` {
		t.Errorf("binding a missing role: got %v, want 404", err)
	}

	// What alice holds she may pass on, as a role or a binding.
	mine := mustCreate(t, alice.RbacV1().Roles("team-a").Create, role("configmaps", rbacv1.PolicyRule{Verbs: []string{"get", "create"},
		APIGroups: []string{""}, Resources: []string{"configmaps"}}))
	eventually(t, "alice binds her role", func() error {
		_, err := alice.RbacV1().RoleBindings("team-a").Create(ctx, binding("configmaps", "Role", "configmaps"), metav1.CreateOptions{})
		return err
	})

	// Updates and patches are checked too.
	mine.Rules = append(mine.Rules, rbacv1.PolicyRule{Verbs: []string{"delete"}, APIGroups: []string{""}, Resources: []string{"pods"}})
	_, err = alice.RbacV1().Roles("team-a").Update(ctx, mine, metav1.UpdateOptions{})
	forbidden(t, err, `roles.rbac.authorization.k8s.io "configmaps" is forbidden: `+held+"\n"+
		`{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}`)
	_, err = alice.RbacV1().Roles("team-a").Patch(ctx, "configmaps", types.JSONPatchType,
		[]byte(`[{"op":"add","path":"/rules/-","value":{"verbs":["list"],"apiGroups":[""],"resources":["secrets"]}}]`), metav1.PatchOptions{})
	forbidden(t, err, `roles.rbac.authorization.k8s.io "configmaps" is forbidden: `+held+"\n"+
		`{APIGroups:[""], Resources:["secrets"], Verbs:["list"]}`)
	// Changing only what the garbage collector changes is not an escalation check.
	if _, err := alice.RbacV1().Roles("team-a").Patch(ctx, "configmaps", types.MergePatchType,
		[]byte(`{"metadata":{"finalizers":["example.com/keep"]}}`), metav1.PatchOptions{}); err != nil {
		t.Errorf("finalizer patch: %v", err)
	}

	// The bind verb on a role lets alice bind it without holding it; escalate lets her write any role.
	mustCreate(t, admin.RbacV1().Roles("team-a").Create, role("binder", rbacv1.PolicyRule{Verbs: []string{"bind"},
		APIGroups: []string{rbacv1.GroupName}, Resources: []string{"clusterroles"}, ResourceNames: []string{"powerful"}},
		rbacv1.PolicyRule{Verbs: []string{"escalate"}, APIGroups: []string{rbacv1.GroupName}, Resources: []string{"roles"}}))
	mustCreate(t, admin.RbacV1().RoleBindings("team-a").Create, binding("binder", "Role", "binder"))
	eventually(t, "bind lets alice bind powerful", func() error {
		_, err := alice.RbacV1().RoleBindings("team-a").Create(ctx, binding("escalate", "ClusterRole", "powerful"), metav1.CreateOptions{})
		return err
	})
	mustCreate(t, alice.RbacV1().Roles("team-a").Create, role("pods", rbacv1.PolicyRule{Verbs: []string{"*"},
		APIGroups: []string{""}, Resources: []string{"pods"}}))

	// The admin (system:masters) grants anything, and only cluster-admins may aggregate.
	mustCreate(t, admin.RbacV1().ClusterRoleBindings().Create, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "alice-roles"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "powerful"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}}})
}
