package rbac

import (
	"context"
	"fmt"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/apictl/apictl/pkg/serve/auth"
	"github.com/apictl/apictl/pkg/serve/request"
)

func res(verb, group, resource, sub, ns, name string) *request.RequestInfo {
	return &request.RequestInfo{IsResourceRequest: true, Verb: verb, APIGroup: group, Resource: resource, Subresource: sub, Namespace: ns, Name: name}
}

func nonRes(verb, path string) *request.RequestInfo {
	return &request.RequestInfo{Verb: verb, Path: path}
}

func TestRuleAllows(t *testing.T) {
	tests := []struct {
		name string
		rule rbacv1.PolicyRule
		info *request.RequestInfo
		want bool
	}{
		{"exact", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}, res("get", "", "pods", "", "a", "p"), true},
		{"other verb", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}, res("list", "", "pods", "", "a", ""), false},
		{"other group", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{"apps"}, Resources: []string{"pods"}}, res("get", "", "pods", "", "a", "p"), false},
		{"stars", rbacv1.PolicyRule{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}, res("patch", "apps", "deployments", "scale", "a", "d"), true},
		{"resource does not cover its subresources", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}, res("get", "", "pods", "status", "a", "p"), false},
		{"subresource", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods/status"}}, res("get", "", "pods", "status", "a", "p"), true},
		{"subresource is not the resource", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods/status"}}, res("get", "", "pods", "", "a", "p"), false},
		{"subresource of another resource", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods/status"}}, res("get", "", "nodes", "status", "", "n"), false},
		{"*/scale", rbacv1.PolicyRule{Verbs: []string{"update"}, APIGroups: []string{"apps"}, Resources: []string{"*/scale"}}, res("update", "apps", "deployments", "scale", "a", "d"), true},
		{"*/scale is not status", rbacv1.PolicyRule{Verbs: []string{"update"}, APIGroups: []string{"apps"}, Resources: []string{"*/scale"}}, res("update", "apps", "deployments", "status", "a", "d"), false},
		{"*/scale is not the resource", rbacv1.PolicyRule{Verbs: []string{"update"}, APIGroups: []string{"apps"}, Resources: []string{"*/scale"}}, res("update", "apps", "deployments", "", "a", "d"), false},
		// kube has no "<resource>/*" wildcard: it names a subresource called "*".
		{"pods/* is literal", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods/*"}}, res("get", "", "pods", "log", "a", "p"), false},
		{"resource name", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"x"}}, res("get", "", "configmaps", "", "a", "x"), true},
		{"other resource name", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"x"}}, res("get", "", "configmaps", "", "a", "y"), false},
		{"resource names never allow a list", rbacv1.PolicyRule{Verbs: []string{"list"}, APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"x"}}, res("list", "", "configmaps", "", "a", ""), false},
		{"url", rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}}, nonRes("get", "/healthz"), true},
		{"url is exact", rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}}, nonRes("get", "/healthz/etcd"), false},
		{"url prefix", rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz*"}}, nonRes("get", "/healthz/etcd"), true},
		{"url star", rbacv1.PolicyRule{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}, nonRes("post", "/anything"), true},
		{"url rule is not a resource rule", rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"*"}}, res("get", "", "pods", "", "a", "p"), false},
		{"resource rule is not a url rule", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{"*"}, Resources: []string{"*"}}, nonRes("get", "/healthz"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ruleAllows(&tt.rule, tt.info); got != tt.want {
				t.Errorf("ruleAllows = %v, want %v", got, tt.want)
			}
		})
	}
}

func objMeta(ns, name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: ns, Name: name} }

func testPolicy(o *objects) *Policy {
	p := NewPolicy()
	p.objs = o
	p.listened = map[string]bool{ResourceRoles: true, ResourceClusterRoles: true, ResourceRoleBindings: true, ResourceClusterRoleBindings: true}
	p.publish()
	return p
}

func TestAuthorize(t *testing.T) {
	o := newObjects()
	o.clusterRoles["edit"] = &rbacv1.ClusterRole{ObjectMeta: objMeta("", "edit"), Rules: []rbacv1.PolicyRule{
		{Verbs: []string{"*"}, APIGroups: []string{""}, Resources: []string{"configmaps"}}}}
	o.clusterRoles["nodes"] = &rbacv1.ClusterRole{ObjectMeta: objMeta("", "nodes"), Rules: []rbacv1.PolicyRule{
		{Verbs: []string{"list"}, APIGroups: []string{""}, Resources: []string{"nodes"}},
		{Verbs: []string{"get"}, NonResourceURLs: []string{"/metrics"}}}}
	o.roles["a/pods"] = &rbacv1.Role{ObjectMeta: objMeta("team-a", "pods"), Rules: []rbacv1.PolicyRule{
		{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}}}
	o.roleBindings["a/edit"] = &rbacv1.RoleBinding{ObjectMeta: objMeta("team-a", "edit"),
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, Name: "dev"}}}
	o.roleBindings["a/pods"] = &rbacv1.RoleBinding{ObjectMeta: objMeta("team-a", "pods"),
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "pods"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "builder"}, {Kind: rbacv1.UserKind, Name: "carol"}}}
	o.roleBindings["b/gone"] = &rbacv1.RoleBinding{ObjectMeta: objMeta("team-b", "gone"),
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "gone"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "carol"}}}
	o.roleBindings["b/gone2"] = &rbacv1.RoleBinding{ObjectMeta: objMeta("team-b", "gone2"),
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "gone"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "carol"}}}
	o.clusterRoleBindings["nodes"] = &rbacv1.ClusterRoleBinding{ObjectMeta: objMeta("", "nodes"),
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "nodes"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, Name: "system:serviceaccounts:ci"},
			{Kind: rbacv1.ServiceAccountKind, Name: "watcher", Namespace: "ops"}, {Kind: rbacv1.ServiceAccountKind, Name: "no-namespace"}}}
	a := &Authorizer{policy: testPolicy(o)}

	alice := &request.User{Name: "alice", Groups: []string{"dev", request.GroupAuthenticated}}
	carol := &request.User{Name: "carol", Groups: []string{request.GroupAuthenticated}}
	builder := &request.User{Name: "system:serviceaccount:team-a:builder", Groups: []string{"system:serviceaccounts", "system:serviceaccounts:team-a"}}
	ciBot := &request.User{Name: "system:serviceaccount:ci:bot", Groups: []string{"system:serviceaccounts", "system:serviceaccounts:ci"}}
	watcher := &request.User{Name: "system:serviceaccount:ops:watcher"}
	tests := []struct {
		name   string
		user   *request.User
		info   *request.RequestInfo
		want   auth.Decision
		reason string
	}{
		{"group binding of a cluster role in its namespace", alice, res("create", "", "configmaps", "", "team-a", ""), auth.Allow, ""},
		{"not in another namespace", alice, res("create", "", "configmaps", "", "team-b", ""), auth.NoOpinion, ""},
		{"not at the cluster scope", alice, res("list", "", "configmaps", "", "", ""), auth.NoOpinion, ""},
		{"not other resources", alice, res("get", "", "secrets", "", "team-a", "s"), auth.NoOpinion, ""},
		{"service account without namespace is the binding's", builder, res("get", "", "pods", "", "team-a", "p"), auth.Allow, ""},
		{"user of a role binding", carol, res("get", "", "pods", "", "team-a", "p"), auth.Allow, ""},
		{"role grants only its verbs", carol, res("delete", "", "pods", "", "team-a", "p"), auth.NoOpinion, ""},
		{"missing roles are the reason", carol, res("get", "", "pods", "", "team-b", "p"), auth.NoOpinion,
			`RBAC: [role.rbac.authorization.k8s.io "gone" not found, clusterrole.rbac.authorization.k8s.io "gone" not found]`},
		{"service-account group", ciBot, res("list", "", "nodes", "", "", ""), auth.Allow, ""},
		{"service-account group, url", ciBot, nonRes("get", "/metrics"), auth.Allow, ""},
		{"service account with namespace", watcher, res("list", "", "nodes", "", "", ""), auth.Allow, ""},
		{"cluster binding applies in namespaces", watcher, res("list", "", "nodes", "", "team-a", ""), auth.Allow, ""},
		{"nobody", &request.User{Name: "eve"}, res("get", "", "pods", "", "team-a", "p"), auth.NoOpinion, ""},
		{"no user", nil, res("get", "", "pods", "", "team-a", "p"), auth.NoOpinion, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, reason, err := a.Authorize(context.Background(), tt.user, tt.info)
			if err != nil || d != tt.want {
				t.Fatalf("Authorize = %v, %v; want %v", d, err, tt.want)
			}
			if tt.want != auth.Allow && reason != tt.reason && !(tt.name == "missing roles are the reason" && reason ==
				`RBAC: [clusterrole.rbac.authorization.k8s.io "gone" not found, role.rbac.authorization.k8s.io "gone" not found]`) {
				t.Errorf("reason = %q, want %q", reason, tt.reason)
			}
		})
	}
}

// policyWithBindings is a policy of n RoleBindings spread over 100 namespaces, each to a group of its
// own, plus the binding under test: group dev may edit configmaps in team-a.
func policyWithBindings(n int) *Policy {
	o := newObjects()
	o.clusterRoles["edit"] = &rbacv1.ClusterRole{ObjectMeta: objMeta("", "edit"), Rules: []rbacv1.PolicyRule{
		{Verbs: []string{"get", "list", "watch"}, APIGroups: []string{""}, Resources: []string{"pods", "pods/log", "services"}},
		{Verbs: []string{"create", "update", "patch", "delete"}, APIGroups: []string{""}, Resources: []string{"configmaps", "secrets"}},
	}}
	for i := range n {
		ns := fmt.Sprintf("ns-%d", i%100)
		o.roleBindings[fmt.Sprint(i)] = &rbacv1.RoleBinding{ObjectMeta: objMeta(ns, fmt.Sprint(i)),
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, Name: fmt.Sprintf("group-%d", i)}, {Kind: rbacv1.UserKind, Name: fmt.Sprintf("user-%d", i)}}}
		o.clusterRoleBindings[fmt.Sprint(i)] = &rbacv1.ClusterRoleBinding{ObjectMeta: objMeta("", fmt.Sprint(i)),
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, Name: fmt.Sprintf("cluster-group-%d", i)}}}
	}
	o.roleBindings["dev"] = &rbacv1.RoleBinding{ObjectMeta: objMeta("team-a", "dev"),
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, Name: "dev"}}}
	return testPolicy(o)
}

func BenchmarkRBACAuthorize1000Bindings(b *testing.B) {
	a := &Authorizer{policy: policyWithBindings(1000)}
	alice := &request.User{Name: "alice", Groups: []string{"qa", "dev", request.GroupAuthenticated}}
	ctx := context.Background()
	cases := []struct {
		name string
		info *request.RequestInfo
		want auth.Decision
	}{
		{"allowed", res("create", "", "configmaps", "", "team-a", ""), auth.Allow},
		{"denied", res("create", "", "configmaps", "", "team-b", ""), auth.NoOpinion},
		{"denied cluster scope", res("list", "", "configmaps", "", "", ""), auth.NoOpinion},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if d, _, _ := a.Authorize(ctx, alice, c.info); d != c.want {
					b.Fatalf("decision %v, want %v", d, c.want)
				}
			}
		})
	}
}

func TestEscalationMessage(t *testing.T) {
	o := newObjects()
	o.clusterRoles["cm"] = &rbacv1.ClusterRole{ObjectMeta: objMeta("", "cm"), Rules: []rbacv1.PolicyRule{
		{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"configmaps"}}}}
	o.clusterRoleBindings["alice"] = &rbacv1.ClusterRoleBinding{ObjectMeta: objMeta("", "alice"),
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cm"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "alice"}}}
	o.clusterRoleBindings["gone"] = &rbacv1.ClusterRoleBinding{ObjectMeta: objMeta("", "gone"),
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "gone"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "alice"}}}
	e := &Escalation{Policy: testPolicy(o)}
	alice := &request.User{Name: "alice", Groups: []string{"dev"}}
	info := &request.RequestInfo{IsResourceRequest: true, Verb: "create", APIGroup: rbacv1.GroupName, Resource: "clusterroles"}
	err := e.confirmNoEscalation(alice, info, []rbacv1.PolicyRule{
		{Verbs: []string{"get", "list"}, APIGroups: []string{"", "apps"}, Resources: []string{"configmaps"}},
		{Verbs: []string{"get"}, NonResourceURLs: []string{"/metrics", "/healthz"}},
	})
	want := `user "alice" (groups=["dev"]) is attempting to grant RBAC permissions not currently held:
{APIGroups:[""], Resources:["configmaps"], Verbs:["list"]}
{APIGroups:["apps"], Resources:["configmaps"], Verbs:["get" "list"]}
{NonResourceURLs:["/healthz"], Verbs:["get"]}
{NonResourceURLs:["/metrics"], Verbs:["get"]}; resolution errors: [clusterroles.rbac.authorization.k8s.io "gone" not found]`
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
	if err := e.confirmNoEscalation(alice, info, []rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"configmaps"}}}); err != nil {
		t.Errorf("held rules: %v", err)
	}
}

func TestEscalationCheck(t *testing.T) {
	o := newObjects()
	o.clusterRoles["roles"] = &rbacv1.ClusterRole{ObjectMeta: objMeta("", "roles"), Rules: []rbacv1.PolicyRule{
		{Verbs: []string{"create", "update"}, APIGroups: []string{rbacv1.GroupName}, Resources: []string{"clusterroles", "clusterrolebindings"}},
		{Verbs: []string{"bind"}, APIGroups: []string{rbacv1.GroupName}, Resources: []string{"clusterroles"}, ResourceNames: []string{"bindable"}}}}
	o.clusterRoles["bindable"] = &rbacv1.ClusterRole{ObjectMeta: objMeta("", "bindable"), Rules: []rbacv1.PolicyRule{
		{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}}}
	o.clusterRoleBindings["alice"] = &rbacv1.ClusterRoleBinding{ObjectMeta: objMeta("", "alice"),
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "roles"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "alice"}}}
	a := &Authorizer{policy: testPolicy(o)}
	e := &Escalation{Policy: a.policy, Authorizer: auth.Chain(a)}
	alice := &request.User{Name: "alice"}
	root := &request.User{Name: "root", Groups: []string{request.GroupMasters}}
	crInfo := &request.RequestInfo{IsResourceRequest: true, Verb: "create", APIGroup: rbacv1.GroupName, Resource: "clusterroles"}
	crbInfo := &request.RequestInfo{IsResourceRequest: true, Verb: "create", APIGroup: rbacv1.GroupName, Resource: "clusterrolebindings"}
	aggregating := &rbacv1.ClusterRole{ObjectMeta: objMeta("", "agg"), AggregationRule: &rbacv1.AggregationRule{
		ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"x": "y"}}}}}
	binding := func(role string) *rbacv1.ClusterRoleBinding {
		return &rbacv1.ClusterRoleBinding{ObjectMeta: objMeta("", "b"), RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role}}
	}
	tests := []struct {
		name string
		user *request.User
		info *request.RequestInfo
		obj  runtime.Object
		want string
	}{
		{"aggregation needs cluster-admin", alice, crInfo, aggregating,
			`clusterroles.rbac.authorization.k8s.io "agg" is forbidden: must have cluster-admin privileges to use the aggregationRule`},
		{"masters aggregate", root, crInfo, aggregating, ""},
		{"bind allows binding what alice does not hold", alice, crbInfo, binding("bindable"), ""},
		{"binding a missing role", alice, crbInfo, binding("missing"), `clusterrolebindings.rbac.authorization.k8s.io "missing" not found`},
		{"binding what alice holds", alice, crbInfo, binding("roles"), ""},
		{"other kinds pass", alice, crInfo, &rbacv1.RoleList{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := e.Check(context.Background(), tt.user, tt.info, tt.obj, nil)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

// BenchmarkRBACIndexRebuild1000Bindings is what one batch of changes costs the policy feed: the whole
// index is rebuilt off the request path and swapped.
func BenchmarkRBACIndexRebuild1000Bindings(b *testing.B) {
	p := policyWithBindings(1000)
	b.ReportAllocs()
	for b.Loop() {
		buildIndex(p.objs)
	}
}
