package apiservices

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// TestCreate: a local APIService is Available at once, a remote one has no status until the
// availability controller writes one, and v1's defaults give the service port 443.
func TestCreate(t *testing.T) {
	s := Kind().Strategy.(strategy)
	local := &apiregistrationv1.APIService{ObjectMeta: metav1.ObjectMeta{Name: "v1.example.com"},
		Spec:   apiregistrationv1.APIServiceSpec{Group: "example.com", Version: "v1", GroupPriorityMinimum: 100, VersionPriority: 10},
		Status: apiregistrationv1.APIServiceStatus{Conditions: []apiregistrationv1.APIServiceCondition{{Type: "Bogus", Status: "True"}}}}
	s.PrepareForCreate(local)
	if len(local.Status.Conditions) != 1 || local.Status.Conditions[0].Type != apiregistrationv1.Available || local.Status.Conditions[0].Status != apiregistrationv1.ConditionTrue {
		t.Errorf("local status %+v, want Available True alone", local.Status)
	}
	remote := local.DeepCopy()
	remote.Spec.Service = &apiregistrationv1.ServiceReference{Namespace: "ns", Name: "api"}
	s.PrepareForCreate(remote)
	if len(remote.Status.Conditions) != 0 || remote.Spec.Service.Port == nil || *remote.Spec.Service.Port != 443 {
		t.Errorf("remote %+v, want no status and port 443", remote)
	}
	if errs := s.Validate(remote); len(errs) != 0 {
		t.Errorf("valid remote APIService: %v", errs)
	}
}

// TestValidate: kube-aggregator's validation, on its internal type, names the problems.
func TestValidate(t *testing.T) {
	s := Kind().Strategy.(strategy)
	bad := &apiregistrationv1.APIService{ObjectMeta: metav1.ObjectMeta{Name: "v2.example.com"},
		Spec: apiregistrationv1.APIServiceSpec{Group: "example.com", Version: "v1", InsecureSkipTLSVerify: true}}
	got := s.Validate(bad).ToAggregate().Error()
	for _, want := range []string{"metadata.name", "spec.groupPriorityMinimum", "spec.versionPriority", "spec.insecureSkipTLSVerify"} {
		if !strings.Contains(got, want) {
			t.Errorf("errors %q do not name %s", got, want)
		}
	}
}

// TestCells pins kube-aggregator's table: Local or namespace/name, and Available with its reason
// unless True.
func TestCells(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	a := &apiregistrationv1.APIService{ObjectMeta: metav1.ObjectMeta{Name: "v1.example.com", CreationTimestamp: metav1.NewTime(now.Add(-2 * time.Minute))}}
	if got := cells(a, now); got[1] != "Local" || got[2] != "Unknown" || got[3] != "2m" {
		t.Errorf("local cells %v", got)
	}
	a.Spec.Service = &apiregistrationv1.ServiceReference{Namespace: "ns", Name: "api"}
	a.Status.Conditions = []apiregistrationv1.APIServiceCondition{{Type: apiregistrationv1.Available, Status: apiregistrationv1.ConditionFalse, Reason: "MissingEndpoints"}}
	if got := cells(a, now); got[1] != "ns/api" || got[2] != "False (MissingEndpoints)" {
		t.Errorf("remote cells %v", got)
	}
}
