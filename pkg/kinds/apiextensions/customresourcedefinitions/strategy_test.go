package customresourcedefinitions

import (
	"testing"

	apiextensionshelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestMarkOnDelete: a CRD's first delete starts its cleanup (the finalizer, once, and the
// Terminating condition); later deletes are the generic store's.
func TestMarkOnDelete(t *testing.T) {
	s := newStrategy()
	crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com",
		Finalizers: []string{apiextensionsv1.CustomResourceCleanupFinalizer}}}
	if applies, changed := s.MarkOnDelete(crd, nil); !applies || !changed {
		t.Fatalf("first delete: %v %v", applies, changed)
	}
	if len(crd.Finalizers) != 1 {
		t.Errorf("finalizers %v, want the cleanup finalizer once", crd.Finalizers)
	}
	cond := apiextensionshelpers.FindCRDCondition(crd, apiextensionsv1.Terminating)
	if cond == nil || cond.Status != apiextensionsv1.ConditionTrue || cond.Reason != "InstanceDeletionPending" {
		t.Errorf("Terminating condition %+v", cond)
	}
	now := metav1.Now()
	crd.DeletionTimestamp = &now
	if applies, _ := s.MarkOnDelete(crd, nil); applies {
		t.Error("a later delete is the generic store's")
	}
}
