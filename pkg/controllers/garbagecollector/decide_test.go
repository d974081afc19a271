package garbagecollector

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestDecide(t *testing.T) {
	a := metav1.OwnerReference{UID: "a"}
	b := metav1.OwnerReference{UID: "b"}
	c := metav1.OwnerReference{UID: "c"}
	refs := func(r ...metav1.OwnerReference) []metav1.OwnerReference { return r }
	for _, tc := range []struct {
		name                       string
		in                         classified
		hasDependents, depDeleting bool
		finalizers                 []string
		want                       decision
	}{
		{name: "a solid owner keeps the object", in: classified{solid: refs(a)}, want: decision{action: keep}},
		{name: "solid and dangling: the dangling reference goes", in: classified{solid: refs(a), dangling: refs(b)},
			want: decision{action: removeRefs, remove: []types.UID{"b"}}},
		{name: "solid and waiting: the waiting reference goes too", in: classified{solid: refs(a), dangling: refs(b), waiting: refs(c)},
			want: decision{action: removeRefs, remove: []types.UID{"b", "c"}}},
		{name: "all owners absent: background delete", in: classified{dangling: refs(a, b)},
			want: decision{action: deleteObject, policy: metav1.DeletePropagationBackground}},
		{name: "an orphan finalizer already there is honoured", in: classified{dangling: refs(a)}, finalizers: []string{"orphan"},
			want: decision{action: deleteObject, policy: metav1.DeletePropagationOrphan}},
		{name: "a foreground finalizer already there is honoured", in: classified{dangling: refs(a)}, finalizers: []string{"foregroundDeletion"},
			want: decision{action: deleteObject, policy: metav1.DeletePropagationForeground}},
		{name: "waiting owner, no dependents of its own: background", in: classified{waiting: refs(a)},
			want: decision{action: deleteObject, policy: metav1.DeletePropagationBackground}},
		{name: "waiting owner and dependents of its own: foreground", in: classified{waiting: refs(a), dangling: refs(b)}, hasDependents: true,
			want: decision{action: deleteObject, policy: metav1.DeletePropagationForeground}},
		{name: "a dependent deleting its dependents too: unblock first (cycle)", in: classified{waiting: refs(a)}, hasDependents: true, depDeleting: true,
			want: decision{action: deleteObject, policy: metav1.DeletePropagationForeground, unblock: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := decide(tc.in, tc.hasDependents, tc.depDeleting, tc.finalizers)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("decide = %+v, want %+v", got, tc.want)
			}
		})
	}
}
