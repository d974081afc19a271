package registry

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestSecretDecodingDefaults: a Secret comes out of decoding, a request body's (Strategy.Default)
// or a patched object's (SetDefaults), with stringData folded into data and the type defaulted,
// before the field manager sees it. kube-apiserver v1.37.2 records f:data/f:<key> and f:type for
// a create, update or patch that sent stringData and no type, never f:stringData (an apply
// records what it applied: f:stringData).
func TestSecretDecodingDefaults(t *testing.T) {
	s := strategy(t, "", "secrets")
	for _, tt := range []struct {
		name string
		in   corev1.Secret
		want corev1.Secret
	}{
		{
			name: "stringData folds into data, overriding it, and the type is Opaque",
			in: corev1.Secret{StringData: map[string]string{"a": "x", "b": "new"},
				Data: map[string][]byte{"b": []byte("old"), "c": []byte("z")}},
			want: corev1.Secret{Type: corev1.SecretTypeOpaque,
				Data: map[string][]byte{"a": []byte("x"), "b": []byte("new"), "c": []byte("z")}},
		},
		{
			name: "stringData alone makes data",
			in:   corev1.Secret{StringData: map[string]string{"a": "x"}, Type: corev1.SecretTypeBasicAuth},
			want: corev1.Secret{Type: corev1.SecretTypeBasicAuth, Data: map[string][]byte{"a": []byte("x")}},
		},
		{
			name: "a type is kept, data without stringData untouched",
			in:   corev1.Secret{Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{"k": []byte("v")}},
			want: corev1.Secret{Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{"k": []byte("v")}},
		},
		{
			name: "an empty secret gets the type only",
			want: corev1.Secret{Type: corev1.SecretTypeOpaque},
		},
	} {
		for _, how := range []struct {
			name  string
			apply func(runtime.Object)
		}{{"decoded", s.Default}, {"patched", SetDefaults}} {
			t.Run(tt.name+"/"+how.name, func(t *testing.T) {
				got := tt.in.DeepCopy()
				how.apply(got)
				if !reflect.DeepEqual(*got, tt.want) {
					t.Errorf("got %+v\nwant %+v", *got, tt.want)
				}
			})
		}
	}
}

// TestSetDefaultsOfDescribedKinds: a patched object of a kind with a package of its own gets that
// kind's decoding defaults (kinds.Defaulter) before the field manager records it, as a decoded one
// does: a FlowSchema patched without a matchingPrecedence has kube's 1000, a RoleBinding's roleRef
// kube's API group.
func TestSetDefaultsOfDescribedKinds(t *testing.T) {
	fs := &flowcontrolv1.FlowSchema{}
	SetDefaults(fs)
	if fs.Spec.MatchingPrecedence != 1000 {
		t.Errorf("FlowSchema matchingPrecedence %d, want 1000", fs.Spec.MatchingPrecedence)
	}
	rb := &rbacv1.RoleBinding{RoleRef: rbacv1.RoleRef{Kind: "Role", Name: "r"}}
	SetDefaults(rb)
	if rb.RoleRef.APIGroup != rbacv1.GroupName {
		t.Errorf("RoleBinding roleRef.apiGroup %q, want %q", rb.RoleRef.APIGroup, rbacv1.GroupName)
	}
	cm := &corev1.ConfigMap{} // a described kind without decoding defaults is left alone
	SetDefaults(cm)
	if !reflect.DeepEqual(cm, &corev1.ConfigMap{}) {
		t.Errorf("ConfigMap %+v", cm)
	}
}
