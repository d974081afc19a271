package admission

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/utils/ptr"
)

// BenchmarkValidatingPolicy is the cost of the ValidatingAdmissionPolicy plugin on one create: with
// no binding (the chain then skips the plugin: Configured is false), and with one CEL policy that
// matches and allows. Run: go test -run NONE -bench ValidatingPolicy ./pkg/admission/
func BenchmarkValidatingPolicy(b *testing.B) {
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "size"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy:    ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: configMapRules,
			Validations: []admissionregistrationv1.Validation{{
				Expression: "!has(object.data) || size(object.data) < 10", Message: "too many keys"}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "size-binding"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "size",
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{},
				ObjectSelector: &metav1.LabelSelector{}, MatchPolicy: ptr.To(admissionregistrationv1.Equivalent)}},
	}
	for _, bc := range []struct {
		name string
		objs []runtime.Object
	}{
		{"none", nil},
		{"one CEL policy", []runtime.Object{policy, binding}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			env := newPolicyEnv(b, append([]runtime.Object{namespace("bench", nil)}, bc.objs...)...)
			v := env.validating.Interface.(admission.ValidationInterface)
			o := objectInterfaces()
			ctx := context.Background()
			if len(bc.objs) > 0 {
				waitFor(b, "the plugin to count its binding", env.validating.Configured)
			}
			b.ReportAllocs()
			b.ResetTimer()
			start := cpuTime(b)
			for i := 0; i < b.N; i++ {
				attrs := createAttributes(configMap("bench", fmt.Sprint("cm-", i), map[string]string{"a": "b"}), configMaps)
				if !env.validating.Configured() {
					continue // what the chain does
				}
				if err := v.Validate(ctx, attrs, o); err != nil {
					b.Fatal(err)
				}
			}
			// CPU time says more than wall time on a shared machine; it counts the plugin's
			// background work (informers, GC) too.
			b.ReportMetric(float64((cpuTime(b)-start).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
