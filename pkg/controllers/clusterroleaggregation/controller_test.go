package clusterroleaggregation

import (
	"context"
	"log/slog"
	"reflect"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

func role(name string, labels map[string]string, rules ...rbacv1.PolicyRule) *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Rules: rules}
}

func rule(verb, resource string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: []string{verb}, APIGroups: []string{""}, Resources: []string{resource}}
}

func TestAggregate(t *testing.T) {
	view := map[string]string{"agg": "view"}
	edit := map[string]string{"agg": "edit"}
	aggregating := func(name string, labels map[string]string, selectors ...metav1.LabelSelector) *rbacv1.ClusterRole {
		r := role(name, labels)
		r.AggregationRule = &rbacv1.AggregationRule{ClusterRoleSelectors: selectors}
		return r
	}
	viewSel := metav1.LabelSelector{MatchLabels: view}
	editSel := metav1.LabelSelector{MatchLabels: edit}
	tests := []struct {
		name  string
		role  *rbacv1.ClusterRole
		roles []*rbacv1.ClusterRole
		want  []rbacv1.PolicyRule
	}{
		{"nothing matches", aggregating("v", nil, viewSel), []*rbacv1.ClusterRole{role("a", edit, rule("get", "pods"))}, nil},
		{"matches in name order, each rule once", aggregating("v", nil, viewSel), []*rbacv1.ClusterRole{
			role("a", view, rule("get", "pods"), rule("list", "pods")),
			role("b", view, rule("list", "pods"), rule("get", "secrets")),
			role("c", edit, rule("delete", "pods")),
		}, []rbacv1.PolicyRule{rule("get", "pods"), rule("list", "pods"), rule("get", "secrets")}},
		{"selectors in order", aggregating("e", nil, editSel, viewSel), []*rbacv1.ClusterRole{
			role("a", view, rule("get", "pods")),
			role("b", edit, rule("delete", "pods")),
		}, []rbacv1.PolicyRule{rule("delete", "pods"), rule("get", "pods")}},
		{"never itself", aggregating("v", view, viewSel), []*rbacv1.ClusterRole{
			role("v", view, rule("get", "nodes")),
			role("a", view, rule("get", "pods")),
		}, []rbacv1.PolicyRule{rule("get", "pods")}},
		{"expressions", aggregating("v", nil, metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "agg", Operator: metav1.LabelSelectorOpIn, Values: []string{"view", "edit"}}}}), []*rbacv1.ClusterRole{
			role("a", view, rule("get", "pods")),
			role("b", edit, rule("delete", "pods")),
			role("c", nil, rule("create", "pods")),
		}, []rbacv1.PolicyRule{rule("get", "pods"), rule("delete", "pods")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Aggregate(tt.role, tt.roles)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %v\nwant %v", got, tt.want)
			}
		})
	}
	bad := aggregating("v", nil, metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "agg", Operator: "Nope"}}})
	if _, err := Aggregate(bad, nil); err == nil {
		t.Error("an invalid selector aggregates")
	}
}

type staticSource struct{ roles []*rbacv1.ClusterRole }

func (s staticSource) ClusterRoles() []*rbacv1.ClusterRole { return s.roles }
func (s staticSource) Changed() <-chan struct{}            { return nil }

func TestSyncAllWritesOnlyChanges(t *testing.T) {
	view := map[string]string{"agg": "view"}
	agg := role("view", nil)
	agg.AggregationRule = &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: view}}}
	current := role("current", nil, rule("get", "pods"))
	current.AggregationRule = agg.AggregationRule
	member := role("pods", view, rule("get", "pods"))
	client := fake.NewClientset(agg, current, member)
	c := New(staticSource{roles: []*rbacv1.ClusterRole{agg, current, member}}, client.RbacV1(), slog.New(slog.DiscardHandler))
	if err := c.SyncAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	var updated []string
	for _, a := range client.Actions() {
		if u, ok := a.(k8stesting.UpdateAction); ok {
			updated = append(updated, u.GetObject().(*rbacv1.ClusterRole).Name)
		}
	}
	if !reflect.DeepEqual(updated, []string{"view"}) {
		t.Errorf("updated %v, want only view", updated)
	}
	got, _ := client.RbacV1().ClusterRoles().Get(context.Background(), "view", metav1.GetOptions{})
	if !reflect.DeepEqual(got.Rules, []rbacv1.PolicyRule{rule("get", "pods")}) {
		t.Errorf("view rules %v", got.Rules)
	}
}
