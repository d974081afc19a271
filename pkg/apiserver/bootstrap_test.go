package apiserver_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/apictl/apictl/internal/servertest"
)

// TestRBACWithDefaultRoles is the scenario: with the default policy, a RoleBinding of edit
// in team-a to group dev lets alice work there and nowhere else, and she cannot make herself admin.
func TestRBACWithDefaultRoles(t *testing.T) {
	s := servertest.Start(t, "--authorization-mode", "RBAC")
	ctx := context.Background()
	admin := adminClient(t, s)
	alice, _ := clientFor(t, s, "alice", "dev")
	// The default policy is in force once the server is ready: no retries here.
	if err := alice.Discovery().RESTClient().Get().AbsPath("/api").Do(ctx).Error(); err != nil {
		t.Fatalf("discovery right after readiness: %v", err)
	}
	err := alice.Discovery().RESTClient().Get().AbsPath("/metrics").Do(ctx).Error()
	forbidden(t, err, `forbidden: User "alice" cannot get path "/metrics"`)
	for _, ns := range []string{"team-a", "team-b"} {
		mustCreate(t, admin.CoreV1().Namespaces().Create, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	}
	mustCreate(t, admin.RbacV1().RoleBindings("team-a").Create, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "dev-edit"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "dev"}}})

	eventually(t, "alice creates a configmap in team-a", func() error {
		_, err := alice.CoreV1().ConfigMaps("team-a").Create(ctx, configMap("mine"), metav1.CreateOptions{})
		return err
	})
	if _, err := alice.CoreV1().Secrets("team-a").List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("edit reads secrets: %v", err)
	}
	// edit aggregates view, itself aggregated: the second level may take one more pass of the
	// aggregation controller, as in kube.
	eventually(t, "edit includes view's reads", func() error {
		_, err := alice.CoreV1().Events("team-a").List(ctx, metav1.ListOptions{})
		return err
	})
	_, err = alice.CoreV1().ConfigMaps("team-b").List(ctx, metav1.ListOptions{})
	forbidden(t, err, `configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" in the namespace "team-b"`)
	_, err = alice.CoreV1().ConfigMaps("team-b").Create(ctx, configMap("theirs"), metav1.CreateOptions{})
	forbidden(t, err, `configmaps is forbidden: User "alice" cannot create resource "configmaps" in API group "" in the namespace "team-b"`)
	_, err = alice.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	forbidden(t, err, `nodes is forbidden: User "alice" cannot list resource "nodes" in API group "" at the cluster scope`)

	// edit grants no roles or bindings: alice cannot grant herself admin.
	_, err = alice.RbacV1().RoleBindings("team-a").Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "alice-admin"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "admin"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}}}, metav1.CreateOptions{})
	forbidden(t, err, `rolebindings.rbac.authorization.k8s.io is forbidden: User "alice" cannot create resource "rolebindings" in API group "rbac.authorization.k8s.io" in the namespace "team-a"`)
	// Given the right to write bindings, she still cannot bind admin: she does not hold it.
	mustCreate(t, admin.RbacV1().Roles("team-a").Create, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "bindings"},
		Rules: []rbacv1.PolicyRule{{Verbs: []string{"create"}, APIGroups: []string{rbacv1.GroupName}, Resources: []string{"rolebindings"}}}})
	mustCreate(t, admin.RbacV1().RoleBindings("team-a").Create, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "bindings"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "bindings"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}}})
	eventually(t, "alice's escalation is refused", func() error {
		_, err := alice.RbacV1().RoleBindings("team-a").Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "alice-admin"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "admin"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}}}, metav1.CreateOptions{})
		const want = `rolebindings.rbac.authorization.k8s.io "alice-admin" is forbidden: user "alice" (groups=["dev" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:` + "\n"
		if !apierrors.IsForbidden(err) || !strings.HasPrefix(err.Error(), want) ||
			!strings.Contains(err.Error(), `{APIGroups:["rbac.authorization.k8s.io"], Resources:["roles"], Verbs:["create" "delete" "deletecollection" "get" "list" "patch" "update" "watch"]}`) {
			return &mismatch{got: err, want: want + "…"}
		}
		return nil
	})

	// Every authenticated user reads discovery and health.
	for _, path := range []string{"/api", "/apis", "/version", "/healthz"} {
		if err := alice.Discovery().RESTClient().Get().AbsPath(path).Do(ctx).Error(); err != nil {
			t.Errorf("GET %s as alice: %v", path, err)
		}
	}
	// system:masters still does everything.
	if _, err := admin.CoreV1().Secrets("team-b").List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("admin: %v", err)
	}
}

func ruleFor(rules []rbacv1.PolicyRule, group, resource, verb string) bool {
	return slices.ContainsFunc(rules, func(r rbacv1.PolicyRule) bool {
		return slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb)
	})
}

func clusterRole(t *testing.T, c kubernetes.Interface, name string) *rbacv1.ClusterRole {
	t.Helper()
	r, err := c.RbacV1().ClusterRoles().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRBACBootstrapReconcile(t *testing.T) {
	dir := t.TempDir()
	s, err := servertest.StartE(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	admin := adminClient(t, s)
	for _, name := range []string{"cluster-admin", "admin", "edit", "view", "system:aggregate-to-admin", "system:aggregate-to-edit",
		"system:aggregate-to-view", "system:discovery", "system:basic-user", "system:public-info-viewer"} {
		r := clusterRole(t, admin, name)
		if r.Labels["kubernetes.io/bootstrapping"] != "rbac-defaults" || r.Annotations[rbacv1.AutoUpdateAnnotationKey] != "true" {
			t.Errorf("clusterrole %s: labels %v, annotations %v", name, r.Labels, r.Annotations)
		}
	}
	for _, b := range []struct{ name, group string }{{"cluster-admin", "system:masters"}, {"system:discovery", "system:authenticated"},
		{"system:basic-user", "system:authenticated"}, {"system:public-info-viewer", "system:unauthenticated"}} {
		crb, err := admin.RbacV1().ClusterRoleBindings().Get(ctx, b.name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if crb.RoleRef.Name != b.name || !slices.ContainsFunc(crb.Subjects, func(s rbacv1.Subject) bool { return s.Name == b.group }) {
			t.Errorf("clusterrolebinding %s: %+v", b.name, crb)
		}
	}
	eventually(t, "view, edit and admin aggregate", func() error {
		for _, c := range []struct{ role, group, resource, verb string }{
			{"view", "", "configmaps", "list"},
			{"edit", "", "configmaps", "create"},
			{"edit", "", "configmaps", "list"},
			{"admin", rbacv1.GroupName, "rolebindings", "create"},
			{"admin", "apps", "deployments", "update"},
		} {
			if !ruleFor(clusterRole(t, admin, c.role).Rules, c.group, c.resource, c.verb) {
				return &mismatch{want: c.role + " has " + c.verb + " " + c.resource}
			}
		}
		return nil
	})

	// A role labelled aggregate-to-view joins view, edit and admin, and leaves them when deleted.
	mustCreate(t, admin.RbacV1().ClusterRoles().Create, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "widgets-view",
		Labels: map[string]string{"rbac.authorization.k8s.io/aggregate-to-view": "true"}},
		Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{"example.com"}, Resources: []string{"widgets"}}}})
	eventually(t, "widgets join admin through edit and view", func() error {
		if !ruleFor(clusterRole(t, admin, "admin").Rules, "example.com", "widgets", "get") {
			return &mismatch{want: "admin has get widgets"}
		}
		return nil
	})
	if err := admin.RbacV1().ClusterRoles().Delete(ctx, "widgets-view", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "widgets leave view", func() error {
		if ruleFor(clusterRole(t, admin, "view").Rules, "example.com", "widgets", "get") {
			return &mismatch{want: "view without widgets"}
		}
		return nil
	})

	// Administrators' changes: an added subject and rule stay; a removed default rule comes back, unless
	// the role opted out of updates.
	crb, _ := admin.RbacV1().ClusterRoleBindings().Get(ctx, "system:discovery", metav1.GetOptions{})
	crb.Subjects = append(crb.Subjects, rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "robot"})
	if _, err := admin.RbacV1().ClusterRoleBindings().Update(ctx, crb, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	basic := clusterRole(t, admin, "system:basic-user")
	basic.Rules = append(basic.Rules, rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"namespaces"}})
	if _, err := admin.RbacV1().ClusterRoles().Update(ctx, basic, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	public := clusterRole(t, admin, "system:public-info-viewer")
	public.Rules = nil
	if _, err := admin.RbacV1().ClusterRoles().Update(ctx, public, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	discovery := clusterRole(t, admin, "system:discovery")
	discovery.Rules = nil
	discovery.Annotations[rbacv1.AutoUpdateAnnotationKey] = "false"
	if _, err := admin.RbacV1().ClusterRoles().Update(ctx, discovery, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}

	s, err = servertest.StartE(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop() })
	admin = adminClient(t, s)
	crb, err = admin.RbacV1().ClusterRoleBindings().Get(ctx, "system:discovery", metav1.GetOptions{})
	if err != nil || !slices.ContainsFunc(crb.Subjects, func(s rbacv1.Subject) bool { return s.Name == "robot" }) {
		t.Errorf("added subject is gone: %+v, %v", crb, err)
	}
	if !ruleFor(clusterRole(t, admin, "system:basic-user").Rules, "", "namespaces", "get") {
		t.Error("added rule is gone")
	}
	// kube adds what is missing rule by rule, one URL and verb each.
	if got := clusterRole(t, admin, "system:public-info-viewer").Rules; len(got) != 5 || !slices.Contains(got[0].NonResourceURLs, "/healthz") {
		t.Errorf("removed default rules not restored: %+v", got)
	}
	if got := clusterRole(t, admin, "system:discovery").Rules; len(got) != 0 {
		t.Errorf("autoupdate=false role was changed: %+v", got)
	}
}
