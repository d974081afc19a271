package namespaces

//lint:file-ignore SA1019 orphanDependents is deprecated in kube's API, and kube still honours it

import (
	"slices"
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

// TestNamespaceDeletionFinalizers pins kube's namespace storage rules.
func TestDeletionFinalizers(t *testing.T) {
	policy := func(p metav1.DeletionPropagation) *metav1.DeleteOptions {
		return &metav1.DeleteOptions{PropagationPolicy: &p}
	}
	orphanDependents := func(b bool) *metav1.DeleteOptions { return &metav1.DeleteOptions{OrphanDependents: &b} }
	tests := []struct {
		name       string
		finalizers []string
		opts       *metav1.DeleteOptions
		want       []string
	}{
		{name: "none", want: nil},
		{name: "no options keep", finalizers: []string{"orphan"}, opts: &metav1.DeleteOptions{}, want: []string{"orphan"}},
		// kube: a/b then foregroundDeletion.
		{name: "foreground", finalizers: []string{"a/b"}, opts: policy(metav1.DeletePropagationForeground), want: []string{"a/b", "foregroundDeletion"}},
		{name: "background removes both", finalizers: []string{"orphan", "a/b", "foregroundDeletion"}, opts: policy(metav1.DeletePropagationBackground), want: []string{"a/b"}},
		{name: "orphanDependents=false is foreground", opts: orphanDependents(false), want: []string{"foregroundDeletion"}},
		{name: "orphanDependents=true", opts: orphanDependents(true), want: []string{"orphan"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := deletionFinalizers(tt.finalizers, tt.opts); !slices.Equal(got, tt.want) {
				t.Errorf("deletionFinalizers = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestMarkOnDelete: the first delete marks a namespace Terminating with its finalizers; later ones
// return it as it is while its spec.finalizers wait, and leave it to the generic rules after.
func TestMarkOnDelete(t *testing.T) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}, Spec: corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{corev1.FinalizerKubernetes}}}
	foreground := metav1.DeletePropagationForeground
	if applies, changed := (strategy{}).MarkOnDelete(ns, &metav1.DeleteOptions{PropagationPolicy: &foreground}); !applies || !changed ||
		ns.Status.Phase != corev1.NamespaceTerminating || !slices.Equal(ns.Finalizers, []string{metav1.FinalizerDeleteDependents}) {
		t.Fatalf("first delete: %v %v %+v", applies, changed, ns)
	}
	now := metav1.Now()
	ns.DeletionTimestamp = &now
	if applies, changed := (strategy{}).MarkOnDelete(ns, nil); !applies || changed {
		t.Errorf("a later delete while spec.finalizers wait: %v %v", applies, changed)
	}
	ns.Spec.Finalizers = nil
	if applies, _ := (strategy{}).MarkOnDelete(ns, nil); applies {
		t.Error("a later delete with spec.finalizers gone is the generic store's")
	}
}
