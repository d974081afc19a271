package registry

import (
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestRBACValidationMessages pins kube's answers, checked against kube-apiserver v1.37.2: the
// declaratively validated fields last and without detail, subjects' apiGroup defaulted before
// validation, aggregation selectors checked with apimachinery's label selector validation, and the
// immutable roleRef printed as kube's internal type.
func TestRBACValidationMessages(t *testing.T) {
	rb := func(ref rbacv1.RoleRef, subjects ...rbacv1.Subject) *rbacv1.RoleBinding {
		m := om("b")
		m.ResourceVersion = "5"
		return &rbacv1.RoleBinding{ObjectMeta: m, RoleRef: ref, Subjects: subjects}
	}
	ref := func(kind, name string) rbacv1.RoleRef {
		return rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: name}
	}
	cr := func(selectors ...metav1.LabelSelector) *rbacv1.ClusterRole {
		return &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "agg"},
			AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: selectors}}
	}
	for _, tc := range []struct {
		name, resource string
		obj, old       runtime.Object
		want           string
	}{
		{name: "role without verbs", resource: "roles",
			obj:  &rbacv1.Role{ObjectMeta: om("broken"), Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}}}},
			want: `Role.rbac.authorization.k8s.io "broken" is invalid: rules[0].verbs: Required value`},
		{name: "a User subject gets the RBAC group", resource: "rolebindings",
			obj:  rb(ref("Deployment", "x"), rbacv1.Subject{Kind: "User", Name: "bob"}),
			want: `RoleBinding.rbac.authorization.k8s.io "b" is invalid: roleRef.kind: Unsupported value: "Deployment": supported values: "Role", "ClusterRole"`},
		{name: "declarative errors last, subjects before roleRef", resource: "rolebindings",
			obj:  rb(ref("Role", ""), rbacv1.Subject{Kind: "ServiceAccount", Name: "Bad_Name"}, rbacv1.Subject{Kind: "User"}, rbacv1.Subject{Kind: "Group", Name: "g"}),
			want: `RoleBinding.rbac.authorization.k8s.io "b" is invalid: [subjects[0].name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), subjects[1].name: Required value, roleRef.name: Required value]`},
		// Conformance's webhook tests leave roleRef.apiGroup out (kube-apiserver v1.37.2 defaults it).
		{name: "a roleRef without apiGroup gets the RBAC group", resource: "rolebindings",
			obj: rb(rbacv1.RoleRef{Kind: "Role", Name: "reader"}, rbacv1.Subject{Kind: "User", Name: "bob"})},
		{name: "a cluster roleRef without apiGroup gets the RBAC group", resource: "clusterrolebindings",
			obj: &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "b"}, RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "view"},
				Subjects: []rbacv1.Subject{{Kind: "Group", Name: "g"}}}},
		{name: "a roleRef of another group stays refused", resource: "rolebindings",
			obj:  rb(rbacv1.RoleRef{APIGroup: "example.com", Kind: "Role", Name: "reader"}),
			want: `RoleBinding.rbac.authorization.k8s.io "b" is invalid: roleRef.apiGroup: Unsupported value: "example.com": supported values: "rbac.authorization.k8s.io"`},
		{name: "roleRef is immutable", resource: "rolebindings",
			obj: rb(ref("Role", "applied")), old: rb(ref("Role", "reader")),
			want: `RoleBinding.rbac.authorization.k8s.io "b" is invalid: roleRef: Invalid value: {"APIGroup":"rbac.authorization.k8s.io","Kind":"Role","Name":"applied"}: field is immutable`},
		{name: "aggregation rule without selectors", resource: "clusterroles", obj: cr(),
			want: `ClusterRole.rbac.authorization.k8s.io "agg" is invalid: aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector required if aggregationRule is non-nil`},
		{name: "aggregation selector operator", resource: "clusterroles",
			obj:  cr(metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Near"}}}),
			want: `ClusterRole.rbac.authorization.k8s.io "agg" is invalid: [aggregationRule.clusterRoleSelectors[0].matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator, aggregationRule.clusterRoleSelectors[0]: Invalid value: null: invalid label selector.]`},
		{name: "aggregation selector label value", resource: "clusterroles",
			obj:  cr(metav1.LabelSelector{MatchLabels: map[string]string{"a": "b c"}}),
			want: `ClusterRole.rbac.authorization.k8s.io "agg" is invalid: [aggregationRule.clusterRoleSelectors[0].matchLabels: Invalid value: "b c": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?'), aggregationRule.clusterRoleSelectors[0]: Invalid value: null: invalid label selector.]`},
		{name: "aggregation selector that works", resource: "clusterroles",
			obj: cr(metav1.LabelSelector{MatchLabels: map[string]string{"rbac.example.com/aggregate-to-view": "true"}})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := strategy(t, rbacv1.GroupName, tc.resource)
			s.Default(tc.obj)
			var err error
			if tc.old != nil {
				err = s.ValidateUpdate(tc.obj, tc.old)
			} else {
				if err := s.PrepareForCreate(tc.obj, time.Now()); err != nil {
					t.Fatal(err)
				}
				err = s.ValidateCreate(tc.obj)
			}
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("unexpected error %v", err)
			case tc.want != "" && (err == nil || err.Error() != tc.want):
				t.Errorf("error %v\nwant      %s", err, tc.want)
			}
		})
	}
}
