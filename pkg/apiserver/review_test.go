package apiserver_test

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/apictl/apictl/internal/servertest"
	"github.com/apictl/apictl/internal/testtool"
)

// kubectlRun runs the real kubectl with kubeconfig and a private cache, returning its combined output
// and exit code.
func kubectlRun(t *testing.T, kubeconfig string, args ...string) (string, int) {
	t.Helper()
	args = append([]string{"--kubeconfig", kubeconfig, "--cache-dir", filepath.Join(t.TempDir(), "cache")}, args...)
	out, err := exec.Command(testtool.Tool(t, "kubectl"), args...).CombinedOutput()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return string(out), exit.ExitCode()
	case err != nil:
		t.Fatalf("kubectl %s: %v", strings.Join(args, " "), err)
	}
	return string(out), 0
}

// rbacTeam starts an RBAC server where group dev may edit team-a (kube's edit ClusterRole) and alice
// is in dev; it returns the server, the admin client and alice's kubeconfig.
func rbacTeam(t *testing.T) (*servertest.Server, *kubernetes.Clientset, string) {
	t.Helper()
	s := servertest.Start(t, "--authorization-mode", "RBAC")
	admin := adminClient(t, s)
	for _, ns := range []string{"team-a", "team-b"} {
		mustCreate(t, admin.CoreV1().Namespaces().Create, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	}
	mustCreate(t, admin.RbacV1().RoleBindings("team-a").Create, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "dev-edit"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "dev"}}})
	alice, kubeconfig := clientFor(t, s, "alice", "dev")
	eventually(t, "the binding reaches the RBAC index", func() error {
		_, err := alice.CoreV1().ConfigMaps("team-a").List(context.Background(), metav1.ListOptions{})
		return err
	})
	return s, admin, kubeconfig
}

// TestKubectlAuth is the must-show for the review APIs and impersonation, with real kubectl:
// can-i, can-i --list and whoami for a client certificate, and --as for an admin but not for alice.
func TestKubectlAuth(t *testing.T) {
	s, _, alice := rbacTeam(t)
	admin := s.AdminKubeconfig

	for _, tt := range []struct {
		name       string
		kubeconfig string
		args       []string
		want       string
		code       int
	}{
		{"alice may create configmaps in team-a", alice, []string{"auth", "can-i", "create", "configmaps", "-n", "team-a"}, "yes", 0},
		{"alice may not in team-b", alice, []string{"auth", "can-i", "create", "configmaps", "-n", "team-b"}, "no", 1},
		{"alice may not list namespaces", alice, []string{"auth", "can-i", "list", "namespaces"}, "no", 1},
		{"alice may read /version", alice, []string{"auth", "can-i", "get", "/version"}, "yes", 0},
		{"the admin may do anything", admin, []string{"auth", "can-i", "*", "*"}, "yes", 0},
		{"the admin asks as alice", admin, []string{"auth", "can-i", "create", "configmaps", "-n", "team-a", "--as", "alice", "--as-group", "dev"}, "yes", 0},
		{"the admin asks as alice about roles", admin, []string{"auth", "can-i", "create", "roles", "-n", "team-a", "--as", "alice", "--as-group", "dev"}, "no", 1},
		{"alice without her group", admin, []string{"auth", "can-i", "create", "configmaps", "-n", "team-a", "--as", "alice"}, "no", 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, code := kubectlRun(t, tt.kubeconfig, tt.args...)
			lines := strings.Split(strings.TrimSpace(out), "\n") // after kubectl's warnings
			if lines[len(lines)-1] != tt.want || code != tt.code {
				t.Errorf("kubectl %s: exit %d, output %q; want %d, %q", strings.Join(tt.args, " "), code, out, tt.code, tt.want)
			}
		})
	}

	t.Run("alice cannot impersonate", func(t *testing.T) {
		out, code := kubectlRun(t, alice, "auth", "can-i", "get", "pods", "--as", "bob")
		want := `Error from server (Forbidden): selfsubjectaccessreviews.authorization.k8s.io is forbidden: User "alice" cannot impersonate-on:user-info:create resource "selfsubjectaccessreviews" in API group "authorization.k8s.io" at the cluster scope`
		if code == 0 || !strings.Contains(out, want) {
			t.Errorf("exit %d, output %q; want a failure with %q", code, out, want)
		}
	})

	t.Run("can-i --list", func(t *testing.T) {
		out, code := kubectlRun(t, alice, "auth", "can-i", "--list", "-n", "team-a")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, out)
		}
		for _, want := range []string{"configmaps ", "selfsubjectaccessreviews.authorization.k8s.io", "[/version]"} {
			if !strings.Contains(out, want) {
				t.Errorf("can-i --list lacks %q:\n%s", want, out)
			}
		}
		out, _ = kubectlRun(t, alice, "auth", "can-i", "--list", "-n", "team-b")
		if strings.Contains(out, "configmaps ") {
			t.Errorf("alice's rules in team-b include configmaps:\n%s", out)
		}
	})

	t.Run("whoami", func(t *testing.T) {
		out, code := kubectlRun(t, alice, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username} {.status.userInfo.groups}")
		if code != 0 || out != `alice ["dev","system:authenticated"]` {
			t.Errorf("whoami: exit %d, %q", code, out)
		}
		out, _ = kubectlRun(t, admin, "auth", "whoami", "--as", "bob", "--as-group", "x", "-o", "jsonpath={.status.userInfo.username} {.status.userInfo.groups}")
		if out != `bob ["x","system:authenticated"]` {
			t.Errorf("whoami as bob: %q", out)
		}
	})
}

// TestReviewAPIs pins the answers of the review APIs against kube-apiserver v1.37.2's, with the same
// RBAC objects.
func TestReviewAPIs(t *testing.T) {
	s, admin, _ := rbacTeam(t)
	ctx := context.Background()
	authz := admin.AuthorizationV1()

	sar := func(spec authorizationv1.SubjectAccessReviewSpec) authorizationv1.SubjectAccessReviewStatus {
		t.Helper()
		out, err := authz.SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: spec}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return out.Status
	}
	for _, tt := range []struct {
		name string
		spec authorizationv1.SubjectAccessReviewSpec
		want authorizationv1.SubjectAccessReviewStatus
	}{
		{"nobody", authorizationv1.SubjectAccessReviewSpec{User: "nobody", ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "get", Resource: "pods"}},
			authorizationv1.SubjectAccessReviewStatus{}},
		{"system:masters needs no reason", authorizationv1.SubjectAccessReviewSpec{User: "x", Groups: []string{"system:masters"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "get", Resource: "pods"}},
			authorizationv1.SubjectAccessReviewStatus{Allowed: true}},
		{"a cluster role binding", authorizationv1.SubjectAccessReviewSpec{User: "x", Groups: []string{"system:authenticated"},
			NonResourceAttributes: &authorizationv1.NonResourceAttributes{Verb: "get", Path: "/version"}},
			authorizationv1.SubjectAccessReviewStatus{Allowed: true,
				// kube names either binding that allows it, as its cache's order falls; apictl the first by name.
				Reason: `RBAC: allowed by ClusterRoleBinding "system:discovery" of ClusterRole "system:discovery" to Group "system:authenticated"`}},
		{"a role binding", authorizationv1.SubjectAccessReviewSpec{User: "alice", Groups: []string{"dev"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: "team-a", Verb: "create", Resource: "configmaps"}},
			authorizationv1.SubjectAccessReviewStatus{Allowed: true,
				Reason: `RBAC: allowed by RoleBinding "dev-edit/team-a" of ClusterRole "edit" to Group "dev"`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := sar(tt.spec); got != tt.want {
				t.Errorf("status %+v, want %+v", got, tt.want)
			}
		})
	}

	t.Run("invalid", func(t *testing.T) {
		_, err := authz.SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{})
		want := `.authorization.k8s.io "" is invalid: [spec: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified, spec.user: Invalid value: "": at least one of user or group must be specified, metadata: Invalid value: {"name":"x"}: must be empty]`
		if !apierrors.IsInvalid(err) || err.Error() != want {
			t.Errorf("got %v\nwant %s", err, want)
		}
	})

	t.Run("local", func(t *testing.T) {
		lsar := &authorizationv1.LocalSubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: "alice", Groups: []string{"dev"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: "team-a", Verb: "delete", Resource: "secrets"}}}
		out, err := authz.LocalSubjectAccessReviews("team-a").Create(ctx, lsar, metav1.CreateOptions{})
		if err != nil || !out.Status.Allowed || out.Namespace != "team-a" {
			t.Errorf("got %+v, %v", out, err)
		}
		_, err = authz.LocalSubjectAccessReviews("team-b").Create(ctx, lsar, metav1.CreateOptions{})
		if want := `.authorization.k8s.io "" is invalid: spec.resourceAttributes.namespace: Invalid value: "team-a": must match metadata.namespace`; !apierrors.IsInvalid(err) || err.Error() != want {
			t.Errorf("got %v, want %s", err, want)
		}
		lsar.Namespace = "team-a"
		_, err = authz.LocalSubjectAccessReviews("team-b").Create(ctx, lsar, metav1.CreateOptions{})
		if want := "the namespace of the provided object does not match the namespace sent on the request"; !apierrors.IsBadRequest(err) || err.Error() != want {
			t.Errorf("got %v, want %s", err, want)
		}
		lsar.Namespace, lsar.Spec.ResourceAttributes.Namespace = "", "team-b"
		_, err = authz.LocalSubjectAccessReviews("team-a").Create(ctx, lsar, metav1.CreateOptions{})
		if want := `.authorization.k8s.io "" is invalid: spec.resourceAttributes.namespace: Invalid value: "team-b": must match metadata.namespace`; !apierrors.IsInvalid(err) || err.Error() != want {
			t.Errorf("got %v, want %s", err, want)
		}
	})

	t.Run("self", func(t *testing.T) {
		out, err := authz.SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "get", Resource: "pods", Namespace: "x"}}}, metav1.CreateOptions{})
		if err != nil || !out.Status.Allowed || len(out.ManagedFields) != 1 {
			t.Errorf("got %+v, %v", out, err)
		}
		_, err = authz.SelfSubjectRulesReviews().Create(ctx, &authorizationv1.SelfSubjectRulesReview{}, metav1.CreateOptions{})
		if !apierrors.IsBadRequest(err) || err.Error() != "no namespace on request" {
			t.Errorf("rules review without a namespace: %v", err)
		}
	})

	t.Run("rules of nobody", func(t *testing.T) {
		cfg := rest.CopyConfig(s.AdminConfig)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: "nobody"}
		nobody := kubernetes.NewForConfigOrDie(cfg)
		out, err := nobody.AuthorizationV1().SelfSubjectRulesReviews().Create(ctx, &authorizationv1.SelfSubjectRulesReview{
			Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: "default"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if out.Spec.Namespace != "" || len(out.ManagedFields) != 0 || out.Status.Incomplete || out.Status.EvaluationError != "" {
			t.Errorf("got %+v", out)
		}
		has := func(verb, group, resource string) bool {
			for _, r := range out.Status.ResourceRules {
				if strings.Join(r.Verbs, ",") == verb && strings.Join(r.APIGroups, ",") == group && strings.Contains(strings.Join(r.Resources, ","), resource) {
					return true
				}
			}
			return false
		}
		if !has("create", "authorization.k8s.io", "selfsubjectrulesreviews") || !has("create", "authentication.k8s.io", "selfsubjectreviews") || len(out.Status.NonResourceRules) == 0 {
			t.Errorf("nobody's rules are kube's basic-user and discovery rules: %+v", out.Status)
		}
	})

	t.Run("whoami and token review", func(t *testing.T) {
		out, err := admin.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if err != nil || out.Status.UserInfo.Username == "" || out.CreationTimestamp.IsZero() {
			t.Errorf("got %+v, %v", out, err)
		}
		tr, err := admin.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: "nope"}}, metav1.CreateOptions{})
		if err != nil || tr.Status.Authenticated || tr.Status.Error != "invalid bearer token" {
			t.Errorf("got %+v, %v", tr, err)
		}
		_, err = admin.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{}, metav1.CreateOptions{})
		if !apierrors.IsBadRequest(err) || err.Error() != "token is required for TokenReview in authentication" {
			t.Errorf("got %v", err)
		}
	})
}
