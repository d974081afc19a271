package secrets

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestValidate pins the keys each well-known type requires, with kube's field paths, and that an
// invalid value is never echoed.
func TestValidate(t *testing.T) {
	data := func(kv ...string) map[string][]byte {
		m := map[string][]byte{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = []byte(kv[i+1])
		}
		return m
	}
	tests := []struct {
		name string
		s    corev1.Secret
		want string // the errors, joined; "" for none
	}{
		{"opaque", corev1.Secret{Type: corev1.SecretTypeOpaque, Data: data("a", "b")}, ""},
		{"bad key", corev1.Secret{Type: corev1.SecretTypeOpaque, Data: data("a/b", "x")}, `data[a/b]: Invalid value: "a/b"`},
		{"tls without the key", corev1.Secret{Type: corev1.SecretTypeTLS, Data: data("tls.crt", "c")}, "data[tls.key]: Required value"},
		{"basic-auth with neither", corev1.Secret{Type: corev1.SecretTypeBasicAuth}, "data[username]: Required value; data[password]: Required value"},
		{"basic-auth with a password", corev1.Secret{Type: corev1.SecretTypeBasicAuth, Data: data("password", "p")}, ""},
		{"ssh-auth", corev1.Secret{Type: corev1.SecretTypeSSHAuth}, "data[ssh-privatekey]: Required value"},
		{"service account token", corev1.Secret{Type: corev1.SecretTypeServiceAccountToken},
			"metadata.annotations[kubernetes.io/service-account.name]: Required value"},
		{"dockerconfigjson not JSON", corev1.Secret{Type: corev1.SecretTypeDockerConfigJson, Data: data(".dockerconfigjson", "hunter2")},
			`data[.dockerconfigjson]: Invalid value: "<secret contents redacted>"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.s.ObjectMeta = metav1.ObjectMeta{Name: "s", Namespace: "ns"}
			errs := strategy{}.Validate(&tt.s)
			var got []string
			for _, e := range errs {
				got = append(got, e.Error())
			}
			joined := strings.Join(got, "; ")
			if (tt.want == "") != (joined == "") || !strings.Contains(joined, tt.want) || strings.Contains(joined, "hunter2") {
				t.Errorf("errors %q, want %q", joined, tt.want)
			}
		})
	}
}

// TestValidateUpdate: the type is immutable, and so is the data of an immutable Secret.
func TestValidateUpdate(t *testing.T) {
	yes := true
	old := &corev1.Secret{Type: corev1.SecretTypeOpaque, Immutable: &yes, Data: map[string][]byte{"a": []byte("1")}}
	changed := &corev1.Secret{Type: "example.com/other", Immutable: &yes, Data: map[string][]byte{"a": []byte("2")}}
	got := strategy{}.ValidateUpdate(changed, old).ToAggregate().Error()
	for _, want := range []string{`type: Invalid value: "example.com/other": field is immutable`, "data: Forbidden: field is immutable when `immutable` is set"} {
		if !strings.Contains(got, want) {
			t.Errorf("errors %q lack %q", got, want)
		}
	}
}
