package namespaces

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestFinalize: a write to /finalize changes the finalizers and nothing else, and their names are
// checked.
func TestFinalize(t *testing.T) {
	old := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team", Labels: map[string]string{"a": "b"}},
		Spec: corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{corev1.FinalizerKubernetes}}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}}
	sent := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team", Labels: map[string]string{"x": "y"}}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}}
	s := strategy{}
	if !s.WritesSubresource("finalize") || s.WritesSubresource("status") {
		t.Fatal("finalize must be the strategy's own subresource write, and status not")
	}
	out := s.PrepareForSubresourceUpdate("finalize", sent, old).(*corev1.Namespace)
	if len(out.Spec.Finalizers) != 0 || out.Labels["a"] != "b" || out.Status.Phase != corev1.NamespaceTerminating {
		t.Errorf("finalize stored %+v, want the old namespace without finalizers", out)
	}
	sent.Spec.Finalizers = []corev1.FinalizerName{"no/such/finalizer"}
	if errs := s.ValidateSubresourceUpdate("finalize", sent, old); len(errs) != 1 || !strings.Contains(errs[0].Error(), "spec.finalizers[0]") {
		t.Errorf("errors %v, want one at spec.finalizers[0]", errs)
	}
}

// TestStatusUpdate: a status write keeps the spec, takes labels and annotations, and cannot drop the
// name label; the phase must match the deletion timestamp.
func TestStatusUpdate(t *testing.T) {
	old := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}, Spec: corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{corev1.FinalizerKubernetes}}}
	sent := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team", Annotations: map[string]string{"k": "v"}}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}}
	out := strategy{}.PrepareForStatusUpdate(sent, old).(*corev1.Namespace)
	if len(out.Spec.Finalizers) != 1 || out.Annotations["k"] != "v" || out.Labels[corev1.LabelMetadataName] != "team" {
		t.Errorf("status write stored %+v", out)
	}
	if errs := (strategy{}).ValidateStatusUpdate(out, old); len(errs) != 1 || !strings.Contains(errs[0].Error(), "may only be 'Active' if `deletionTimestamp` is empty") {
		t.Errorf("errors %v", errs)
	}
}
