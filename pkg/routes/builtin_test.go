package routes

import (
	"slices"
	"testing"
)

func TestBuiltinIsValid(t *testing.T) {
	if err := Validate(Builtin().Groups()); err != nil {
		t.Fatal(err)
	}
}

// TestBuiltinMatchesKube checks what kube-apiserver 1.32 reports in discovery for these resources
// (kubectl api-resources -o wide and the discovery documents of a real cluster).
func TestBuiltinMatchesKube(t *testing.T) {
	all := StandardVerbs()
	tests := []struct {
		group, plural, kind string
		namespaced          bool
		verbs, shortNames   []string
		hash                string
		subresources        map[string][]string
	}{
		{"", "configmaps", "ConfigMap", true, all, []string{"cm"}, "qFsyl6wFWjQ=", nil},
		{"", "events", "Event", true, all, []string{"ev"}, "r2yiGXH7wu8=", nil},
		// kube-apiserver v1.37.2's GET /apis/events.k8s.io/v1: stored as core v1 events, hence their hash.
		{"events.k8s.io", "events", "Event", true, all, []string{"ev"}, "r2yiGXH7wu8=", nil},
		{"", "namespaces", "Namespace", false, []string{"create", "delete", "get", "list", "patch", "update", "watch"}, []string{"ns"}, "Q3oi5N2YM8M=",
			map[string][]string{"finalize": {"update"}, "status": {"get", "patch", "update"}}},
		// kube-apiserver v1.37.2's GET /api/v1.
		{"", "podtemplates", "PodTemplate", true, all, nil, "LIXB2x4IFpk=", nil},
		{"", "resourcequotas", "ResourceQuota", true, all, []string{"quota"}, "8uhSgffRX6w=", map[string][]string{"status": {"get", "patch", "update"}}},
		{"", "secrets", "Secret", true, all, nil, "S6u1pOWzb84=", nil},
		{"", "serviceaccounts", "ServiceAccount", true, all, []string{"sa"}, "pbx9ZvyFpBE=", map[string][]string{"token": {"create"}}},
		// kube-apiserver v1.37.2's GET /api/v1 and /apis/discovery.k8s.io/v1 (services/proxy left out).
		{"", "services", "Service", true, all, []string{"svc"}, "0/CO1lhkEBI=", map[string][]string{"status": {"get", "patch", "update"}}},
		{"", "endpoints", "Endpoints", true, all, []string{"ep"}, "fWeeMqaN/OA=", nil},
		{"discovery.k8s.io", "endpointslices", "EndpointSlice", true, all, nil, "qgS0xkrxYAI=", nil},
		{"coordination.k8s.io", "leases", "Lease", true, all, nil, "", nil},
		// kube-apiserver v1.37.2's GET /apis/certificates.k8s.io/v1.
		{"certificates.k8s.io", "certificatesigningrequests", "CertificateSigningRequest", false, all, []string{"csr"}, "95fRKMXA+00=",
			map[string][]string{"approval": {"get", "patch", "update"}, "status": {"get", "patch", "update"}}},
		{"certificates.k8s.io", "clustertrustbundles", "ClusterTrustBundle", false, all, nil, "v5yhuVertL4=", nil},
		{"rbac.authorization.k8s.io", "clusterrolebindings", "ClusterRoleBinding", false, all, nil, "48tpQ8gZHFc=", nil},
		{"rbac.authorization.k8s.io", "clusterroles", "ClusterRole", false, all, nil, "bYE5ZWDrJ44=", nil},
		{"rbac.authorization.k8s.io", "rolebindings", "RoleBinding", true, all, nil, "eGsCzGH6b1g=", nil},
		{"rbac.authorization.k8s.io", "roles", "Role", true, all, nil, "7FuwZcIIItM=", nil},
		// The review APIs are create-only: no list kind, printer columns or storageVersionHash.
		{"authentication.k8s.io", "selfsubjectreviews", "SelfSubjectReview", false, []string{"create"}, nil, "", nil},
		{"authentication.k8s.io", "tokenreviews", "TokenReview", false, []string{"create"}, nil, "", nil},
		{"authorization.k8s.io", "localsubjectaccessreviews", "LocalSubjectAccessReview", true, []string{"create"}, nil, "", nil},
		{"authorization.k8s.io", "selfsubjectaccessreviews", "SelfSubjectAccessReview", false, []string{"create"}, nil, "", nil},
		{"authorization.k8s.io", "selfsubjectrulesreviews", "SelfSubjectRulesReview", false, []string{"create"}, nil, "", nil},
		{"authorization.k8s.io", "subjectaccessreviews", "SubjectAccessReview", false, []string{"create"}, nil, "", nil},
		// kube-apiserver v1.37.2's GET /apis/admissionregistration.k8s.io/v1 and /apis/apiregistration.k8s.io/v1.
		{"admissionregistration.k8s.io", "mutatingadmissionpolicies", "MutatingAdmissionPolicy", false, all, nil, "mHCkTKpUTrE=", nil},
		{"admissionregistration.k8s.io", "mutatingadmissionpolicybindings", "MutatingAdmissionPolicyBinding", false, all, nil, "ZKgZT1uTmZ0=", nil},
		{"admissionregistration.k8s.io", "mutatingwebhookconfigurations", "MutatingWebhookConfiguration", false, all, nil, "Sqi0GUgDaX0=", nil},
		{"admissionregistration.k8s.io", "validatingadmissionpolicies", "ValidatingAdmissionPolicy", false, all, nil, "6OxvlMmQ6is=",
			map[string][]string{"status": {"get", "patch", "update"}}},
		{"admissionregistration.k8s.io", "validatingadmissionpolicybindings", "ValidatingAdmissionPolicyBinding", false, all, nil, "v9715VZqakg=", nil},
		{"admissionregistration.k8s.io", "validatingwebhookconfigurations", "ValidatingWebhookConfiguration", false, all, nil, "B0wHjQmsGNk=", nil},
		{"apiregistration.k8s.io", "apiservices", "APIService", false, all, nil, "InPBPD7+PqM=", map[string][]string{"status": {"get", "patch", "update"}}},
		// kube-apiserver v1.37.2's GET /apis/networking.k8s.io/v1.
		{"networking.k8s.io", "ipaddresses", "IPAddress", false, all, []string{"ip"}, "3f/plJFChNE=", nil},
		{"networking.k8s.io", "servicecidrs", "ServiceCIDR", false, all, nil, "gNLvruQhW2g=", map[string][]string{"status": {"get", "patch", "update"}}},
		// kube-apiserver v1.37.2's GET /apis/apiextensions.k8s.io/v1.
		{"apiextensions.k8s.io", "customresourcedefinitions", "CustomResourceDefinition", false, all, []string{"crd", "crds"}, "jfWCUB31mvA=",
			map[string][]string{"status": {"get", "patch", "update"}}},
		// kube-apiserver v1.37.2's GET /apis/flowcontrol.apiserver.k8s.io/v1.
		{"flowcontrol.apiserver.k8s.io", "flowschemas", "FlowSchema", false, all, nil, "GJVAJZSZBIw=", map[string][]string{"status": {"get", "patch", "update"}}},
		{"flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations", "PriorityLevelConfiguration", false, all, nil, "Kir5PVfvNeI=",
			map[string][]string{"status": {"get", "patch", "update"}}},
		// kube-apiserver v1.37.2's GET /apis/storagemigration.k8s.io/v1.
		{"storagemigration.k8s.io", "storageversionmigrations", "StorageVersionMigration", false, all, nil, "pCjmmKOkLy4=",
			map[string][]string{"status": {"get", "patch", "update"}}},
	}
	categories := map[string][]string{"services": {"all"}, "customresourcedefinitions": {"api-extensions"}, "apiservices": {"api-extensions"},
		"mutatingadmissionpolicies": {"api-extensions"}, "mutatingadmissionpolicybindings": {"api-extensions"},
		"mutatingwebhookconfigurations": {"api-extensions"}, "validatingadmissionpolicies": {"api-extensions"},
		"validatingadmissionpolicybindings": {"api-extensions"}, "validatingwebhookconfigurations": {"api-extensions"}}
	api := Builtin()
	count := 0
	for _, g := range api.Groups() {
		for _, v := range g.Versions {
			count += len(v.Resources)
		}
	}
	if count != len(tests) {
		t.Errorf("the built-in API has %d resources, want %d", count, len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.plural, func(t *testing.T) {
			r, ok := api.Resource(tt.group, "v1", tt.plural)
			if !ok {
				t.Fatalf("no resource %s in %q v1", tt.plural, tt.group)
			}
			if r.CreateOnly() {
				if r.ListKind != "" || r.StorageVersionHash != "" || len(r.PrinterColumns) != 0 || r.GoType == nil || r.GoType.Name() != tt.kind ||
					r.Namespaced != tt.namespaced || len(r.ShortNames) != 0 {
					t.Errorf("create-only resource %+v", r)
				}
				return
			}
			if r.Kind != tt.kind || r.ListKind != tt.kind+"List" || r.Namespaced != tt.namespaced {
				t.Errorf("kind %s/%s namespaced %v, want %s namespaced %v", r.Kind, r.ListKind, r.Namespaced, tt.kind, tt.namespaced)
			}
			if !slices.Equal(resourceVerbs(r), tt.verbs) {
				t.Errorf("verbs %v, want %v", resourceVerbs(r), tt.verbs)
			}
			if !slices.Equal(r.ShortNames, tt.shortNames) || !slices.Equal(r.Categories, categories[tt.plural]) {
				t.Errorf("short names %v categories %v, want %v and %v", r.ShortNames, r.Categories, tt.shortNames, categories[tt.plural])
			}
			if tt.hash != "" && r.StorageVersionHash != tt.hash {
				t.Errorf("storageVersionHash %s, want %s", r.StorageVersionHash, tt.hash)
			}
			if len(r.Subresources) != len(tt.subresources) {
				t.Errorf("subresources %v, want %v", r.Subresources, tt.subresources)
			}
			for name, verbs := range tt.subresources {
				s, ok := r.Subresource(name)
				if !ok || !slices.Equal(subresourceVerbs(s), verbs) || (s.Group == "" && s.Kind != tt.kind) { // token's kind is its own group's
					t.Errorf("subresource %s = %+v, want verbs %v", name, s, verbs)
				}
			}
			if r.GoType == nil || r.ListGoType == nil || r.GoType.Name() != tt.kind || r.ListGoType.Name() != tt.kind+"List" {
				t.Errorf("Go types %v, %v", r.GoType, r.ListGoType)
			}
			if len(r.PrinterColumns) == 0 {
				t.Errorf("no printer columns")
			}
		})
	}
}

func TestStorageVersionHash(t *testing.T) {
	if got := StorageVersionHash("", "v1", "ConfigMap"); got != "qFsyl6wFWjQ=" {
		t.Errorf("StorageVersionHash(/v1/ConfigMap) = %s, want qFsyl6wFWjQ=", got)
	}
	if got := StorageVersionHash("apps", "v1", "Deployment"); got == StorageVersionHash("apps", "v1", "ReplicaSet") {
		t.Errorf("different kinds hash alike: %s", got)
	}
}

func TestBuiltinGroupOrder(t *testing.T) {
	var names []string
	for _, g := range Builtin().Groups() {
		names = append(names, g.Name)
	}
	want := []string{"", "apiregistration.k8s.io", "events.k8s.io", "authentication.k8s.io", "authorization.k8s.io", "certificates.k8s.io", "networking.k8s.io",
		"rbac.authorization.k8s.io", "admissionregistration.k8s.io", "apiextensions.k8s.io", "coordination.k8s.io", "discovery.k8s.io",
		"flowcontrol.apiserver.k8s.io", "storagemigration.k8s.io"}
	if !slices.Equal(names, want) {
		t.Errorf("groups %q, want kube's discovery order %q", names, want)
	}
}
