package registry

import (
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apictl/apictl/pkg/kinds"
	"github.com/apictl/apictl/pkg/kinds/validation"
	"github.com/apictl/apictl/pkg/routes"
)

func strategy(t *testing.T, group, resource string) *Strategy {
	t.Helper()
	r, err := New(routes.Builtin())
	if err != nil {
		t.Fatal(err)
	}
	s, ok := r.Strategy(schema.GroupVersionResource{Group: group, Version: "v1", Resource: resource})
	if !ok {
		t.Fatalf("no strategy for %s/%s", group, resource)
	}
	return s
}

func om(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name, Namespace: "default"} }

func TestValidateCreate(t *testing.T) {
	big := strings.Repeat("x", validation.MaxDataSize)
	tests := []struct {
		group, resource string
		obj             runtime.Object
		want            string // substring of the Invalid message; "" means valid
	}{
		{"", "configmaps", &corev1.ConfigMap{ObjectMeta: om("ok"), Data: map[string]string{"a.b": "1"}}, ""},
		{"", "configmaps", &corev1.ConfigMap{ObjectMeta: om("Bad_Name")},
			`ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain`},
		{"", "configmaps", &corev1.ConfigMap{ObjectMeta: om("k"), Data: map[string]string{"a b": "1"}},
			`data[a b]: Invalid value: "a b": a valid config key must consist of alphanumeric characters`},
		{"", "configmaps", &corev1.ConfigMap{ObjectMeta: om("k"), Data: map[string]string{"a": big, "b": "1"}},
			`Too long: may not be more than 1048576 bytes`},
		{"", "configmaps", &corev1.ConfigMap{ObjectMeta: om("k"), Data: map[string]string{"a": "1"}, BinaryData: map[string][]byte{"a": nil}},
			`duplicate of key present in binaryData`},
		{"", "secrets", &corev1.Secret{ObjectMeta: om("tls"), Type: corev1.SecretTypeTLS, Data: map[string][]byte{"tls.crt": nil}},
			`data[tls.key]: Required value`},
		{"", "secrets", &corev1.Secret{ObjectMeta: om("d"), Type: corev1.SecretTypeDockerConfigJson,
			Data: map[string][]byte{".dockerconfigjson": []byte("{")}}, `data[.dockerconfigjson]: Invalid value`},
		{"", "namespaces", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "a.b"}},
			`Namespace "a.b" is invalid: metadata.name: Invalid value: "a.b": must not contain dots`},
		{"", "namespaces", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ok"}}, ""},
		{"coordination.k8s.io", "leases", &coordinationv1.Lease{ObjectMeta: om("l"), Spec: coordinationv1.LeaseSpec{LeaseDurationSeconds: ptr[int32](0)}},
			`spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0`},
		{"rbac.authorization.k8s.io", "roles", &rbacv1.Role{ObjectMeta: om("system:r"), Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}}}, ""},
		{"rbac.authorization.k8s.io", "roles", &rbacv1.Role{ObjectMeta: om("r"), Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/x"}, Verbs: []string{"get"}}}},
			`rules[0].nonResourceURLs: Invalid value: ["/x"]: namespaced rules cannot apply to non-resource URLs`},
		{"rbac.authorization.k8s.io", "clusterroles", &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}}}},
			// kube 1.37: the declaratively validated verbs come last, without detail.
			`[rules[0].resources: Required value: resource rules must supply at least one resource, rules[0].verbs: Required value]`},
		{"rbac.authorization.k8s.io", "clusterrolebindings", &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "b"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "x"},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "sa"}}},
			`roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"`},
	}
	for _, tt := range tests {
		s := strategy(t, tt.group, tt.resource)
		if err := s.PrepareForCreate(tt.obj, time.Now()); err != nil {
			t.Fatal(err)
		}
		err := s.ValidateCreate(tt.obj)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: unexpected error %v", tt.resource, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: error %v\nwant it to contain %s", tt.resource, err, tt.want)
		case tt.want != "" && !apierrors.IsInvalid(err):
			t.Errorf("%s: %v is not a 422 Invalid", tt.resource, err)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func TestPrepareForCreate(t *testing.T) {
	s := strategy(t, "", "secrets")
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", ResourceVersion: "7", UID: "client-chosen"},
		StringData: map[string]string{"password": "hunter2"}, Data: map[string][]byte{"user": []byte("me")}}
	now := time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC)
	if err := s.PrepareForCreate(sec, now); err != nil {
		t.Fatal(err)
	}
	if sec.Type != corev1.SecretTypeOpaque || string(sec.Data["password"]) != "hunter2" || sec.StringData != nil {
		t.Errorf("stringData not merged or type not defaulted: %+v", sec)
	}
	if sec.UID == "client-chosen" || sec.UID == "" || sec.ResourceVersion != "" || !sec.CreationTimestamp.Time.Equal(now.Truncate(time.Second)) {
		t.Errorf("server-owned metadata not set: %+v", sec.ObjectMeta)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}}
	nsS := strategy(t, "", "namespaces")
	_ = nsS.PrepareForCreate(ns, now)
	if ns.Status.Phase != corev1.NamespaceActive || len(ns.Spec.Finalizers) != 1 {
		t.Errorf("namespace not defaulted: %+v", ns)
	}
}

func TestUpdateRules(t *testing.T) {
	yes := true
	s := strategy(t, "", "configmaps")
	old := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "d", UID: "u1", ResourceVersion: "5",
		CreationTimestamp: metav1.NewTime(time.Unix(100, 0))}, Data: map[string]string{"a": "1"}, Immutable: &yes}
	changed := old.DeepCopy()
	changed.Data["a"] = "2"
	changed.UID = ""
	changed.CreationTimestamp = metav1.Time{}
	if err := s.PrepareForUpdate(changed, old); err != nil {
		t.Fatal(err)
	}
	if changed.UID != "u1" || !changed.CreationTimestamp.Equal(&old.CreationTimestamp) {
		t.Errorf("update lost server-owned metadata: %+v", changed.ObjectMeta)
	}
	err := s.ValidateUpdate(changed, old)
	if err == nil || !strings.Contains(err.Error(), "data: Forbidden: field is immutable when `immutable` is set") {
		t.Errorf("immutable ConfigMap changed: %v", err)
	}
	wrongUID := old.DeepCopy()
	wrongUID.UID = "u2"
	if err := s.PrepareForUpdate(wrongUID, old); !apierrors.IsConflict(err) ||
		!strings.Contains(err.Error(), "Precondition failed: UID in precondition: u2, UID in object meta: u1") {
		t.Errorf("uid precondition: %v", err)
	}
}

func TestCustomResourceGeneration(t *testing.T) {
	s, err := newStrategy(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"},
		&routes.Resource{Plural: "widgets", Kind: "Widget", Namespaced: true, Custom: true, Subresources: []routes.Subresource{{Name: "status"}}})
	if err != nil {
		t.Fatal(err)
	}
	newObj := func(spec, status string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
			"metadata": map[string]any{"name": "w", "namespace": "d"}, "spec": map[string]any{"size": spec}, "status": map[string]any{"phase": status}}}
	}
	created := newObj("1", "set-by-client")
	_ = s.PrepareForCreate(created, time.Now())
	if created.GetGeneration() != 1 || created.Object["status"] != nil {
		t.Fatalf("create: generation %d, status %v", created.GetGeneration(), created.Object["status"])
	}
	created.Object["status"] = map[string]any{"phase": "Ready"}
	labelOnly := created.DeepCopy()
	labelOnly.SetLabels(map[string]string{"a": "b"})
	_ = s.PrepareForUpdate(labelOnly, created)
	if labelOnly.GetGeneration() != 1 {
		t.Errorf("a metadata change moved the generation to %d", labelOnly.GetGeneration())
	}
	specChange := newObj("2", "ignored")
	_ = s.PrepareForUpdate(specChange, created)
	if specChange.GetGeneration() != 2 || specChange.Object["status"].(map[string]any)["phase"] != "Ready" {
		t.Errorf("spec change: generation %d, status %v", specChange.GetGeneration(), specChange.Object["status"])
	}
	statusWrite := s.PrepareForStatusUpdate(newObj("99", "Done"), created).(*unstructured.Unstructured)
	if statusWrite.Object["spec"].(map[string]any)["size"] != "1" || statusWrite.Object["status"].(map[string]any)["phase"] != "Done" ||
		statusWrite.GetGeneration() != 1 {
		t.Errorf("status write changed more than status: %v", statusWrite.Object)
	}
}

func TestGenerateName(t *testing.T) {
	name := GenerateName(strings.Repeat("p", 70))
	if len(name) != 63 || !strings.HasPrefix(name, strings.Repeat("p", 58)) {
		t.Errorf("GenerateName = %q", name)
	}
	for _, c := range name[58:] {
		if !strings.ContainsRune(generateNameChars, c) {
			t.Errorf("unexpected character %q", c)
		}
	}
}

// TestNamespaceStatusPhase pins kube's ValidateNamespaceStatusUpdate: the phase goes with the
// deletionTimestamp.
func TestNamespaceStatusPhase(t *testing.T) {
	s := strategy(t, "", "namespaces")
	deleting := metav1.NewTime(time.Unix(200, 0))
	tests := []struct {
		phase    corev1.NamespacePhase
		deleting bool
		wantErr  string
	}{
		{phase: corev1.NamespaceActive},
		{phase: corev1.NamespaceTerminating, deleting: true},
		{phase: "Bogus", wantErr: "Namespace \"n\" is invalid: status.Phase: Invalid value: \"Bogus\": may only be 'Active' if `deletionTimestamp` is empty"},
		{phase: corev1.NamespaceTerminating, wantErr: "may only be 'Active' if `deletionTimestamp` is empty"},
		{phase: corev1.NamespaceActive, deleting: true, wantErr: "Invalid value: \"Active\": may only be 'Terminating' if `deletionTimestamp` is not empty"},
	}
	for _, tt := range tests {
		t.Run(string(tt.phase), func(t *testing.T) {
			old := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "n", UID: "u", ResourceVersion: "5"}}
			if tt.deleting {
				old.DeletionTimestamp = &deleting
			}
			obj := old.DeepCopy()
			obj.Status.Phase = tt.phase
			err := s.ValidateStatusUpdate(obj, old)
			if (tt.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("ValidateStatusUpdate = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestDeletePolicy(t *testing.T) {
	reg, err := New(routes.Builtin())
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		gvr  schema.GroupVersionResource
		want kinds.DeletePolicy
	}{
		{schema.GroupVersionResource{Version: "v1", Resource: "events"}, kinds.Unsupported}, // kube's event strategy
		{schema.GroupVersionResource{Group: "events.k8s.io", Version: "v1", Resource: "events"}, kinds.Unsupported},
		{schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, kinds.DeleteDependents},
		{schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, kinds.DeleteDependents},
	} {
		s, ok := reg.Strategy(tt.gvr)
		if !ok {
			t.Fatalf("no strategy for %v", tt.gvr)
		}
		if got := s.StoreRules().DeletePolicy; got != tt.want {
			t.Errorf("%v: DeletePolicy() = %v, want %v", tt.gvr, got, tt.want)
		}
	}
	// A custom kind named Event is not kube's Event.
	custom, err := newStrategy(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "events"},
		&routes.Resource{Plural: "events", Kind: "Event", Custom: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := custom.StoreRules().DeletePolicy; got != kinds.DeleteDependents {
		t.Errorf("a custom Event: DeletePolicy() = %v, want %v", got, kinds.DeleteDependents)
	}
}

// TestNamespaceStatusUpdate: a write to namespaces/status keeps the spec and the server's metadata,
// and takes the status and the labels and annotations it carries, as kube does (conformance:
// "Namespaces should apply changes to a namespace status").
func TestNamespaceStatusUpdate(t *testing.T) {
	s := strategy(t, "", "namespaces")
	old := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns", UID: "u1", ResourceVersion: "5",
		Labels: map[string]string{corev1.LabelMetadataName: "ns"}},
		Spec:   corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{corev1.FinalizerKubernetes}},
		Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}}
	obj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns", UID: "other", Annotations: map[string]string{"applied": "yes"}},
		Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive, Conditions: []corev1.NamespaceCondition{{Type: "StatusUpdate", Status: corev1.ConditionTrue}}}}
	out := s.PrepareForStatusUpdate(obj, old).(*corev1.Namespace)
	if out.Annotations["applied"] != "yes" {
		t.Errorf("annotations %v, want the written one", out.Annotations)
	}
	if out.UID != "u1" || out.ResourceVersion != "5" || out.Labels[corev1.LabelMetadataName] != "ns" {
		t.Errorf("metadata %+v, want the server's uid, resourceVersion and name label", out.ObjectMeta)
	}
	if len(out.Spec.Finalizers) != 1 || len(out.Status.Conditions) != 1 {
		t.Errorf("spec %+v status %+v, want the old spec and the new status", out.Spec, out.Status)
	}
}
