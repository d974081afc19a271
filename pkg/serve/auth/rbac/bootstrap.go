package rbac

import (
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The labels that aggregate the rules of the default user-facing roles.
const (
	AggregateToAdmin = "rbac.authorization.k8s.io/aggregate-to-admin"
	AggregateToEdit  = "rbac.authorization.k8s.io/aggregate-to-edit"
	AggregateToView  = "rbac.authorization.k8s.io/aggregate-to-view"
)

var (
	readVerbs  = []string{"get", "list", "watch"}
	writeVerbs = []string{"create", "delete", "deletecollection", "patch", "update"}
	allVerbs   = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
)

func resourceRule(verbs []string, groups []string, resources ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: verbs, APIGroups: groups, Resources: resources}
}

func urlRule(verbs []string, urls ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: verbs, NonResourceURLs: urls}
}

func groups(g ...string) []string { return g }

// bootstrapMeta is the metadata kube gives its default policy objects: the bootstrapping label and
// autoupdate "true", which an administrator may set to "false" to keep a changed object as it is.
func bootstrapMeta(name string, labels ...string) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Name: name,
		Labels:      map[string]string{"kubernetes.io/bootstrapping": "rbac-defaults"},
		Annotations: map[string]string{rbacv1.AutoUpdateAnnotationKey: "true"}}
	for _, l := range labels {
		m.Labels[l] = "true"
	}
	return m
}

func aggregating(label string) *rbacv1.AggregationRule {
	return &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{label: "true"}}}}
}

// BootstrapClusterRoles are the default ClusterRoles the server reconciles at every start: the
// superuser role, the user-facing admin, edit and view (filled by aggregation), the roles they
// aggregate, the roles every user holds for discovery, self-review and health, and apictl's
// status reader.
func BootstrapClusterRoles() []rbacv1.ClusterRole {
	health := []string{"/healthz", "/livez", "/readyz", "/version", "/version/"}
	return []rbacv1.ClusterRole{
		{ObjectMeta: bootstrapMeta("cluster-admin"), Rules: []rbacv1.PolicyRule{
			resourceRule([]string{"*"}, groups("*"), "*"),
			urlRule([]string{"*"}, "*"),
		}},
		{ObjectMeta: bootstrapMeta("admin"), AggregationRule: aggregating(AggregateToAdmin)},
		{ObjectMeta: bootstrapMeta("edit", AggregateToAdmin), AggregationRule: aggregating(AggregateToEdit)},
		{ObjectMeta: bootstrapMeta("view", AggregateToEdit), AggregationRule: aggregating(AggregateToView)},
		{ObjectMeta: bootstrapMeta("system:aggregate-to-admin", AggregateToAdmin), Rules: []rbacv1.PolicyRule{
			resourceRule([]string{"create"}, groups("authorization.k8s.io"), "localsubjectaccessreviews"),
			resourceRule(allVerbs, groups(rbacv1.GroupName), "rolebindings", "roles"),
		}},
		{ObjectMeta: bootstrapMeta("system:aggregate-to-edit", AggregateToEdit), Rules: []rbacv1.PolicyRule{
			resourceRule(readVerbs, groups(""), "pods/attach", "pods/exec", "pods/portforward", "pods/proxy", "secrets", "services/proxy"),
			resourceRule([]string{"impersonate"}, groups(""), "serviceaccounts"),
			resourceRule(writeVerbs, groups(""), "pods", "pods/attach", "pods/exec", "pods/portforward", "pods/proxy"),
			resourceRule([]string{"create"}, groups(""), "pods/eviction"),
			resourceRule(writeVerbs, groups(""), "configmaps", "persistentvolumeclaims", "replicationcontrollers",
				"replicationcontrollers/scale", "secrets", "serviceaccounts", "services", "services/proxy"),
			resourceRule([]string{"create"}, groups(""), "serviceaccounts/token"),
			resourceRule(writeVerbs, groups("", "events.k8s.io"), "events"),
			resourceRule(writeVerbs, groups("apps"), "daemonsets", "deployments", "deployments/rollback", "deployments/scale",
				"replicasets", "replicasets/scale", "statefulsets", "statefulsets/scale"),
			resourceRule(writeVerbs, groups("autoscaling"), "horizontalpodautoscalers"),
			resourceRule(writeVerbs, groups("batch"), "cronjobs", "jobs"),
			resourceRule(writeVerbs, groups("extensions"), "daemonsets", "deployments", "deployments/rollback", "deployments/scale",
				"ingresses", "networkpolicies", "replicasets", "replicasets/scale", "replicationcontrollers/scale"),
			resourceRule(writeVerbs, groups("policy"), "poddisruptionbudgets"),
			resourceRule(writeVerbs, groups("networking.k8s.io"), "ingresses", "networkpolicies"),
			resourceRule(allVerbs, groups("coordination.k8s.io"), "leases"),
			resourceRule(writeVerbs, groups("resource.k8s.io"), "resourceclaims", "resourceclaimtemplates"),
		}},
		{ObjectMeta: bootstrapMeta("system:aggregate-to-view", AggregateToView), Rules: []rbacv1.PolicyRule{
			resourceRule(readVerbs, groups(""), "configmaps", "endpoints", "persistentvolumeclaims", "persistentvolumeclaims/status",
				"pods", "replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts", "services", "services/status"),
			resourceRule(readVerbs, groups(""), "bindings", "limitranges", "namespaces/status", "pods/log", "pods/status",
				"replicationcontrollers/status", "resourcequotas", "resourcequotas/status"),
			resourceRule(readVerbs, groups(""), "namespaces"),
			resourceRule(readVerbs, groups("", "events.k8s.io"), "events"),
			resourceRule(readVerbs, groups("discovery.k8s.io"), "endpointslices"),
			resourceRule(readVerbs, groups("apps"), "controllerrevisions", "daemonsets", "daemonsets/status", "deployments",
				"deployments/scale", "deployments/status", "replicasets", "replicasets/scale", "replicasets/status", "statefulsets",
				"statefulsets/scale", "statefulsets/status"),
			resourceRule(readVerbs, groups("autoscaling"), "horizontalpodautoscalers", "horizontalpodautoscalers/status"),
			resourceRule(readVerbs, groups("batch"), "cronjobs", "cronjobs/status", "jobs", "jobs/status"),
			resourceRule(readVerbs, groups("extensions"), "daemonsets", "daemonsets/status", "deployments", "deployments/scale",
				"deployments/status", "ingresses", "ingresses/status", "networkpolicies", "replicasets", "replicasets/scale",
				"replicasets/status", "replicationcontrollers/scale"),
			resourceRule(readVerbs, groups("policy"), "poddisruptionbudgets", "poddisruptionbudgets/status"),
			resourceRule(readVerbs, groups("networking.k8s.io"), "ingresses", "ingresses/status", "networkpolicies"),
			resourceRule(readVerbs, groups("resource.k8s.io"), "resourceclaims", "resourceclaims/status", "resourceclaimtemplates"),
		}},
		{ObjectMeta: bootstrapMeta("system:discovery"), Rules: []rbacv1.PolicyRule{
			urlRule([]string{"get"}, "/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*",
				"/readyz", "/version", "/version/"),
		}},
		{ObjectMeta: bootstrapMeta("system:basic-user"), Rules: []rbacv1.PolicyRule{
			resourceRule([]string{"create"}, groups("authorization.k8s.io"), "selfsubjectaccessreviews", "selfsubjectrulesreviews"),
			resourceRule([]string{"create"}, groups("authentication.k8s.io"), "selfsubjectreviews"),
		}},
		// Extension API servers delegate authentication and authorization back to this server; their
		// installers bind their service accounts to this role (k8s.io/sample-apiserver's manifests do).
		{ObjectMeta: bootstrapMeta("system:auth-delegator"), Rules: []rbacv1.PolicyRule{
			resourceRule([]string{"create"}, groups("authentication.k8s.io"), "tokenreviews"),
			resourceRule([]string{"create"}, groups("authorization.k8s.io"), "subjectaccessreviews"),
		}},
		{ObjectMeta: bootstrapMeta("system:public-info-viewer"), Rules: []rbacv1.PolicyRule{urlRule([]string{"get"}, health...)}},
		// apictl's own: `apictl status --kubeconfig` reads the control plane's report with it. Bound
		// to nobody by default, as the report names members, files and holders.
		{ObjectMeta: bootstrapMeta(StatusReader), Rules: []rbacv1.PolicyRule{urlRule([]string{"get"}, "/apictl/v1/status")}},
		// The service-account issuer's OIDC discovery, for workloads that verify tokens.
		{ObjectMeta: bootstrapMeta("system:service-account-issuer-discovery"), Rules: []rbacv1.PolicyRule{urlRule([]string{"get"},
			"/.well-known/openid-configuration", "/.well-known/openid-configuration/", "/openid/v1/jwks", "/openid/v1/jwks/")}},
	}
}

// StatusReader is the ClusterRole that may read /apictl/v1/status, `apictl status`'s report.
const StatusReader = "system:apictl:status-reader"

// ExtensionAuthenticationReader is kube's Role in kube-system that lets extension API servers read
// the extension-apiserver-authentication ConfigMap (bound to their service accounts by their installers).
const ExtensionAuthenticationReader = "extension-apiserver-authentication-reader"

// BootstrapNamespaceRoles are the default Roles the server reconciles at every start, by namespace:
// kube's extension-apiserver-authentication-reader in kube-system.
func BootstrapNamespaceRoles() map[string][]rbacv1.Role {
	reader := rbacv1.Role{ObjectMeta: bootstrapMeta(ExtensionAuthenticationReader), Rules: []rbacv1.PolicyRule{{
		Verbs: readVerbs, APIGroups: groups(""), Resources: []string{"configmaps"},
		ResourceNames: []string{"extension-apiserver-authentication"}}}}
	reader.Namespace = metav1.NamespaceSystem
	return map[string][]rbacv1.Role{metav1.NamespaceSystem: {reader}}
}

// BootstrapNamespaceRoleBindings are kube's default RoleBindings by namespace: the reader Role for
// the controller manager and the scheduler, as kube binds it.
func BootstrapNamespaceRoleBindings() map[string][]rbacv1.RoleBinding {
	user := func(name string) rbacv1.Subject {
		return rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: name}
	}
	b := rbacv1.RoleBinding{ObjectMeta: bootstrapMeta("system::" + ExtensionAuthenticationReader),
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: ExtensionAuthenticationReader},
		Subjects: []rbacv1.Subject{user("system:kube-controller-manager"), user("system:kube-scheduler")}}
	b.Namespace = metav1.NamespaceSystem
	return map[string][]rbacv1.RoleBinding{metav1.NamespaceSystem: {b}}
}

// BootstrapClusterRoleBindings give the default roles to their groups: cluster-admin to
// system:masters, discovery and self-review to every authenticated user, health and version to
// everyone.
func BootstrapClusterRoleBindings() []rbacv1.ClusterRoleBinding {
	group := func(name string) rbacv1.Subject {
		return rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: name}
	}
	binding := func(role string, subjects ...rbacv1.Subject) rbacv1.ClusterRoleBinding {
		return rbacv1.ClusterRoleBinding{ObjectMeta: bootstrapMeta(role),
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects: subjects}
	}
	return []rbacv1.ClusterRoleBinding{
		binding("cluster-admin", group("system:masters")),
		binding("system:discovery", group("system:authenticated")),
		binding("system:basic-user", group("system:authenticated")),
		binding("system:public-info-viewer", group("system:authenticated"), group("system:unauthenticated")),
		binding("system:service-account-issuer-discovery", group("system:serviceaccounts")),
	}
}
