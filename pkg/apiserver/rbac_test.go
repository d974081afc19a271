package apiserver_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/apictl/apictl/internal/servertest"
	"github.com/apictl/apictl/pkg/certs"
)

// clientFor issues a client certificate for user in groups, signed by s's CA, and returns a client
// that presents it.
func clientFor(t *testing.T, s *servertest.Server, user string, groups ...string) (*kubernetes.Clientset, string) {
	t.Helper()
	spec := certs.NewClientSpec(s.CertDir, user)
	spec.Groups = groups
	spec.Server = s.SecureURL
	spec.KubeconfigOut = filepath.Join(t.TempDir(), user+".kubeconfig")
	if _, err := certs.IssueClient(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", spec.KubeconfigOut)
	if err != nil {
		t.Fatal(err)
	}
	return kubernetes.NewForConfigOrDie(cfg), spec.KubeconfigOut
}

func adminClient(t *testing.T, s *servertest.Server) *kubernetes.Clientset {
	t.Helper()
	return kubernetes.NewForConfigOrDie(s.AdminConfig)
}

func mustCreate[T any](t *testing.T, create func(context.Context, T, metav1.CreateOptions) (T, error), obj T) T {
	t.Helper()
	out, err := create(context.Background(), obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// eventually retries f until it returns nil: the RBAC index follows the watch caches.
func eventually(t *testing.T, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func configMap(name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

func forbidden(t *testing.T, err error, want string) {
	t.Helper()
	if !apierrors.IsForbidden(err) {
		t.Fatalf("got %v, want 403", err)
	}
	if err.Error() != want {
		t.Errorf("message\n got %s\nwant %s", err.Error(), want)
	}
}

func TestRBACAuthorization(t *testing.T) {
	s := servertest.Start(t, "--authorization-mode", "RBAC")
	ctx := context.Background()
	admin := adminClient(t, s)
	alice, _ := clientFor(t, s, "alice", "dev")

	for _, ns := range []string{"team-a", "team-b"} {
		mustCreate(t, admin.CoreV1().Namespaces().Create, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	}
	mustCreate(t, admin.RbacV1().ClusterRoles().Create, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "configmap-editor"},
		Rules: []rbacv1.PolicyRule{{Verbs: []string{"*"}, APIGroups: []string{""}, Resources: []string{"configmaps"}}}})
	mustCreate(t, admin.RbacV1().RoleBindings("team-a").Create, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "dev"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "configmap-editor"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "dev"}}})

	eventually(t, "alice creates a configmap in team-a", func() error {
		_, err := alice.CoreV1().ConfigMaps("team-a").Create(ctx, configMap("mine"), metav1.CreateOptions{})
		return err
	})
	if _, err := alice.CoreV1().ConfigMaps("team-a").List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("alice lists configmaps in team-a: %v", err)
	}
	_, err := alice.CoreV1().ConfigMaps("team-b").Create(ctx, configMap("theirs"), metav1.CreateOptions{})
	forbidden(t, err, `configmaps is forbidden: User "alice" cannot create resource "configmaps" in API group "" in the namespace "team-b"`)
	_, err = alice.CoreV1().ConfigMaps("team-b").List(ctx, metav1.ListOptions{})
	forbidden(t, err, `configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" in the namespace "team-b"`)
	_, err = alice.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{})
	forbidden(t, err, `configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" at the cluster scope`)
	_, err = alice.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	forbidden(t, err, `namespaces is forbidden: User "alice" cannot list resource "namespaces" in API group "" at the cluster scope`)
	_, err = alice.CoreV1().Secrets("team-a").Get(ctx, "s", metav1.GetOptions{})
	forbidden(t, err, `secrets "s" is forbidden: User "alice" cannot get resource "secrets" in API group "" in the namespace "team-a"`)

	// A binding to a role that does not exist is the reason kube gives.
	mustCreate(t, admin.RbacV1().RoleBindings("team-b").Create, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "dev"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "missing"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}}})
	eventually(t, "the missing role is the reason", func() error {
		_, err := alice.CoreV1().ConfigMaps("team-b").List(ctx, metav1.ListOptions{})
		want := `configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" in the namespace "team-b": rbac: RBAC: role.rbac.authorization.k8s.io "missing" not found`
		if err == nil || err.Error() != want {
			return &mismatch{got: err, want: want}
		}
		return nil
	})

	// Deleting the binding takes the grant away.
	if err := admin.RbacV1().RoleBindings("team-a").Delete(ctx, "dev", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "alice loses team-a", func() error {
		_, err := alice.CoreV1().ConfigMaps("team-a").List(ctx, metav1.ListOptions{})
		if !apierrors.IsForbidden(err) {
			return &mismatch{got: err, want: "403"}
		}
		return nil
	})

	// system:masters passes whatever RBAC says.
	if _, err := admin.CoreV1().Secrets("team-b").List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("the admin lists secrets: %v", err)
	}
}

// TestRBACByDefault is issue 36's must-show: with no --authorization-mode, a user whose client
// certificate the CA signed (the README's alice, made as `apictl certs client alice --groups dev`
// makes her) may not delete namespaces until a ClusterRoleBinding grants it, while the bootstrap
// admin (system:masters) may do everything from the start.
func TestRBACByDefault(t *testing.T) {
	// CI may run the suites under another mode; this test is about the default.
	t.Setenv(servertest.EnvAuthorizationMode, "")
	s := servertest.Start(t)
	if got := s.Options.Authorization.Modes; len(got) != 1 || got[0] != "RBAC" {
		t.Fatalf("default --authorization-mode = %v, want [RBAC]", got)
	}
	ctx := context.Background()
	admin := adminClient(t, s)
	alice, _ := clientFor(t, s, "alice", "dev")
	canDeleteNamespaces := func(c *kubernetes.Clientset) authorizationv1.SubjectAccessReviewStatus {
		t.Helper()
		out, err := c.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
				Verb: "delete", Resource: "namespaces"}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("SelfSubjectAccessReview: %v", err)
		}
		return out.Status
	}

	if st := canDeleteNamespaces(admin); !st.Allowed {
		t.Errorf("the admin may not delete namespaces: %+v", st)
	}
	mustCreate(t, admin.CoreV1().Namespaces().Create, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "doomed"}})
	if st := canDeleteNamespaces(alice); st.Allowed || st.Denied {
		t.Errorf("alice under the default: %+v, want not allowed (and no opinion, as kube's RBAC)", st)
	}
	err := alice.CoreV1().Namespaces().Delete(ctx, "doomed", metav1.DeleteOptions{})
	// kube's request info takes a namespace's name as its namespace, and so does the message.
	forbidden(t, err, `namespaces "doomed" is forbidden: User "alice" cannot delete resource "namespaces" in API group "" in the namespace "doomed"`)

	mustCreate(t, admin.RbacV1().ClusterRoles().Create, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "namespace-deleter"},
		Rules: []rbacv1.PolicyRule{{Verbs: []string{"delete"}, APIGroups: []string{""}, Resources: []string{"namespaces"}}}})
	mustCreate(t, admin.RbacV1().ClusterRoleBindings().Create, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "alice-deletes-namespaces"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "namespace-deleter"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}}})
	eventually(t, "alice may delete namespaces after the binding", func() error {
		if st := canDeleteNamespaces(alice); !st.Allowed {
			return &mismatch{want: "allowed", got: fmt.Errorf("%+v", st)}
		}
		return nil
	})
	if err := alice.CoreV1().Namespaces().Delete(ctx, "doomed", metav1.DeleteOptions{}); err != nil {
		t.Errorf("alice deletes a namespace with the binding: %v", err)
	}
}

type mismatch struct {
	got  error
	want string
}

func (m *mismatch) Error() string {
	if m.got == nil {
		return "got no error, want " + m.want
	}
	return "got " + m.got.Error() + ", want " + m.want
}

func TestRBACModeLists(t *testing.T) {
	policy := filepath.Join(t.TempDir(), "abac.jsonl")
	if err := os.WriteFile(policy, []byte(`{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":{"user":"carol","namespace":"*","resource":"*","apiGroup":"*"}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		modes   string
		allowed bool
		message string
	}{
		// No opinion from every mode: kube joins their reasons, each after the mode's name.
		{"ABAC,RBAC", false, `configmaps is forbidden: User "bob" cannot list resource "configmaps" in API group "" in the namespace "default": abac: No policy matched.`},
		{"RBAC,AlwaysDeny", false, `configmaps is forbidden: User "bob" cannot list resource "configmaps" in API group "" in the namespace "default": Everything is forbidden.`},
		{"RBAC,AlwaysAllow", true, ""},
		{"AlwaysDeny,RBAC", false, `configmaps is forbidden: User "bob" cannot list resource "configmaps" in API group "" in the namespace "default": Everything is forbidden.`},
	}
	for _, tt := range tests {
		t.Run(tt.modes, func(t *testing.T) {
			args := []string{"--authorization-mode", tt.modes}
			if strings.Contains(tt.modes, "ABAC") {
				args = append(args, "--authorization-policy-file", policy)
			}
			s := servertest.Start(t, args...)
			bob, _ := clientFor(t, s, "bob")
			_, err := bob.CoreV1().ConfigMaps("default").List(context.Background(), metav1.ListOptions{})
			if tt.allowed {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			forbidden(t, err, tt.message)
		})
	}
}
