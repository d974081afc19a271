package admission

import (
	"context"
	"reflect"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/utils/ptr"
)

func addLabel() *admissionregistrationv1.MutatingAdmissionPolicy {
	return &admissionregistrationv1.MutatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "add-label"},
		Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{
			MatchConstraints:   configMapRules,
			FailurePolicy:      ptr.To(admissionregistrationv1.Fail),
			ReinvocationPolicy: admissionregistrationv1.NeverReinvocationPolicy,
			Mutations: []admissionregistrationv1.Mutation{{
				PatchType: admissionregistrationv1.PatchTypeApplyConfiguration,
				ApplyConfiguration: &admissionregistrationv1.ApplyConfiguration{
					Expression: `Object{metadata: Object.metadata{labels: {"mutated-by": "policy"}}}`},
			}, {
				PatchType: admissionregistrationv1.PatchTypeJSONPatch,
				JSONPatch: &admissionregistrationv1.JSONPatch{
					Expression: `[JSONPatch{op: "add", path: "/data", value: {"added": "yes"}}]`},
			}},
		},
	}
}

func addLabelBinding() *admissionregistrationv1.MutatingAdmissionPolicyBinding {
	return &admissionregistrationv1.MutatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "add-label-binding"},
		Spec: admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{PolicyName: "add-label",
			MatchResources: &admissionregistrationv1.MatchResources{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "mapns"}},
				ObjectSelector:    &metav1.LabelSelector{}, MatchPolicy: ptr.To(admissionregistrationv1.Equivalent)}},
	}
}

// TestMutatingPolicy pins what kube-apiserver v1.37.2 stored for the same policy: the apply
// configuration adds the label, and the JSON patch's "add" of /data replaces the whole map.
func TestMutatingPolicy(t *testing.T) {
	tests := []struct {
		name       string
		request    *corev1.ConfigMap
		wantLabels map[string]string
		wantData   map[string]string
	}{{
		name:       "matched",
		request:    configMap("mapns", "m1", map[string]string{"x": "y"}),
		wantLabels: map[string]string{"mutated-by": "policy"},
		wantData:   map[string]string{"added": "yes"},
	}, {
		name:     "other namespace",
		request:  configMap("other", "m2", map[string]string{"x": "y"}),
		wantData: map[string]string{"x": "y"},
	}}
	env := newPolicyEnv(t, namespace("mapns", nil), namespace("other", nil), addLabel(), addLabelBinding())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			attrs := createAttributes(tt.request, configMaps)
			m := env.mutating.Interface.(admission.MutationInterface)
			if err := m.Admit(context.Background(), attrs, objectInterfaces()); err != nil {
				t.Fatal(err)
			}
			got := attrs.GetObject().(*corev1.ConfigMap)
			if !reflect.DeepEqual(got.Labels, tt.wantLabels) || !reflect.DeepEqual(got.Data, tt.wantData) {
				t.Errorf("got labels %v data %v, want labels %v data %v", got.Labels, got.Data, tt.wantLabels, tt.wantData)
			}
		})
	}
}

// TestPolicyPluginsConfigured: a plugin is called only while a binding of its kind exists, and the
// mutating one only with its feature gate on.
func TestPolicyPluginsConfigured(t *testing.T) {
	env := newPolicyEnv(t, addLabel(), addLabelBinding())
	waitFor(t, "the mutating plugin to count its binding", env.mutating.Configured)
	if env.validating.Configured() {
		t.Error("the validating plugin is configured without any ValidatingAdmissionPolicyBinding")
	}
}

// TestMutatingPolicyGate: with MutatingAdmissionPolicy turned off the plugin is never called and
// admits without looking, as kube's does.
func TestMutatingPolicyGate(t *testing.T) {
	gates, err := FeatureGate(map[string]bool{"MutatingAdmissionPolicy": false})
	if err != nil {
		t.Fatal(err)
	}
	env := newPolicyEnvWith(t, func(c *Config) { c.FeatureGates = gates }, namespace("mapns", nil), addLabel(), addLabelBinding())
	if env.mutating.Configured() {
		t.Error("the mutating plugin is configured with its gate off")
	}
	attrs := createAttributes(configMap("mapns", "m1", nil), configMaps)
	if err := env.mutating.Interface.(admission.MutationInterface).Admit(context.Background(), attrs, objectInterfaces()); err != nil {
		t.Fatal(err)
	}
	if got := attrs.GetObject().(*corev1.ConfigMap); len(got.Labels) != 0 {
		t.Errorf("the plugin mutated with its gate off: %v", got.Labels)
	}
}

// TestNewPolicyPluginsNeedsItsParts: a missing client or informer factory is an error, not a panic
// at the first request.
func TestNewPolicyPluginsNeedsItsParts(t *testing.T) {
	if _, _, err := NewPolicyPlugins(Config{}); err == nil {
		t.Fatal("NewPolicyPlugins accepted an empty configuration")
	}
}
