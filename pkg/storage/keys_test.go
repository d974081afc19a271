package storage

import (
	"strings"
	"testing"
)

func TestObjectKeyAndResourcePrefix(t *testing.T) {
	tests := []struct {
		group, resource, namespace, name string
		key, prefix                      string
	}{
		{"", "configmaps", "default", "app", "configmaps/default/app", "configmaps/default/"},
		{"", "namespaces", "", "demo", "namespaces/demo", "namespaces/"},
		{"rbac.authorization.k8s.io", "roles", "kube-system", "r", "rbac.authorization.k8s.io/roles/kube-system/r", "rbac.authorization.k8s.io/roles/kube-system/"},
		{"rbac.authorization.k8s.io", "clusterroles", "", "admin", "rbac.authorization.k8s.io/clusterroles/admin", "rbac.authorization.k8s.io/clusterroles/"},
		{"stable.example.com", "crontabs", "a", "x", "stable.example.com/crontabs/a/x", "stable.example.com/crontabs/a/"},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			if got := ObjectKey(tt.group, tt.resource, tt.namespace, tt.name); got != tt.key {
				t.Errorf("ObjectKey = %q, want %q", got, tt.key)
			}
			if got := ResourcePrefix(tt.group, tt.resource, tt.namespace); got != tt.prefix {
				t.Errorf("ResourcePrefix = %q, want %q", got, tt.prefix)
			}
			if !strings.HasPrefix(tt.key, tt.prefix) {
				t.Errorf("key %q is not under its prefix %q", tt.key, tt.prefix)
			}
		})
	}
}

// A namespace's prefix must not match the keys of a namespace whose name starts with it, nor an
// all-namespaces prefix those of a resource whose name starts with it.
func TestResourcePrefixDoesNotMatchLongerNames(t *testing.T) {
	for _, c := range []struct{ prefix, key string }{
		{ResourcePrefix("", "configmaps", "a"), ObjectKey("", "configmaps", "ab", "x")},
		{ResourcePrefix("", "configmaps", ""), ObjectKey("", "configmapsx", "a", "x")},
		{ResourcePrefix("apps", "deployments", ""), ObjectKey("apps.example.com", "deployments", "a", "x")},
	} {
		if strings.HasPrefix(c.key, c.prefix) {
			t.Errorf("prefix %q matches foreign key %q", c.prefix, c.key)
		}
	}
}
