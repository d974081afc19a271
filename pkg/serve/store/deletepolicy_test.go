package store

//lint:file-ignore SA1019 orphanDependents is deprecated in kube's API, and kube still honours it

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestDeletionFinalizers pins kube's store rules (deletionFinalizersForGarbageCollection); the cases
// marked were checked against kube-apiserver v1.37.2.
func TestDeletionFinalizers(t *testing.T) {
	policy := func(p metav1.DeletionPropagation) *metav1.DeleteOptions {
		return &metav1.DeleteOptions{PropagationPolicy: &p}
	}
	orphanDependents := func(b bool) *metav1.DeleteOptions { return &metav1.DeleteOptions{OrphanDependents: &b} }
	tests := []struct {
		name        string
		gc          GCPolicy
		finalizers  []string
		opts        *metav1.DeleteOptions
		want        []string
		wantChanged bool
	}{
		{name: "no policy, no finalizers", want: nil},
		{name: "nil options", finalizers: []string{"a/b"}, want: []string{"a/b"}},
		// kube: cm-c of the differential corpus.
		{name: "foreground", opts: policy(metav1.DeletePropagationForeground), want: []string{"foregroundDeletion"}, wantChanged: true},
		{name: "orphan", opts: policy(metav1.DeletePropagationOrphan), want: []string{"orphan"}, wantChanged: true},
		{name: "background", opts: policy(metav1.DeletePropagationBackground), want: nil},
		{name: "background removes orphan", finalizers: []string{"orphan"}, opts: policy(metav1.DeletePropagationBackground), want: []string{}, wantChanged: true},
		// kube: a second delete switches x/y,foregroundDeletion to x/y,orphan.
		{name: "orphan replaces foreground, others kept first", finalizers: []string{"x/y", "foregroundDeletion"},
			opts: policy(metav1.DeletePropagationOrphan), want: []string{"x/y", "orphan"}, wantChanged: true},
		{name: "foreground after others", finalizers: []string{"x/y"}, opts: policy(metav1.DeletePropagationForeground),
			want: []string{"x/y", "foregroundDeletion"}, wantChanged: true},
		// kube: a delete without options keeps the finalizer it finds.
		{name: "no policy keeps orphan", finalizers: []string{"x/y", "orphan"}, want: []string{"x/y", "orphan"}},
		{name: "no policy keeps foreground", finalizers: []string{"foregroundDeletion"}, want: []string{"foregroundDeletion"}},
		{name: "orphanDependents=true", opts: orphanDependents(true), want: []string{"orphan"}, wantChanged: true},
		// orphanDependents=false is not foreground in the generic store (it is in namespaces').
		{name: "orphanDependents=false", finalizers: []string{"orphan", "x/y"}, opts: orphanDependents(false), want: []string{"x/y"}, wantChanged: true},
		{name: "same set in another order is unchanged", finalizers: []string{"orphan", "x/y"}, opts: policy(metav1.DeletePropagationOrphan),
			want: []string{"orphan", "x/y"}},
		{name: "orphan by default", gc: gcOrphanDependents, want: []string{"orphan"}, wantChanged: true},
		{name: "orphan default overridden", gc: gcOrphanDependents, opts: policy(metav1.DeletePropagationBackground), want: nil},
		{name: "unsupported: never added", gc: gcUnsupported, opts: policy(metav1.DeletePropagationForeground), want: nil},
		{name: "unsupported: removed", gc: gcUnsupported, finalizers: []string{"orphan", "x/y"}, want: []string{"x/y"}, wantChanged: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, changed := deletionFinalizers(tt.gc, tt.finalizers, tt.opts)
			if !slices.Equal(got, tt.want) || changed != tt.wantChanged {
				t.Errorf("deletionFinalizers = %q, %v; want %q, %v", got, changed, tt.want, tt.wantChanged)
			}
		})
	}
}
