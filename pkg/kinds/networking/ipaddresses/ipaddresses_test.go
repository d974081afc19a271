package ipaddresses

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The files under testdata/want are what kube-apiserver v1.37.2 answered to a dry-run POST of the
// file of the same name under testdata/in, recorded with the reference server (../shared/reference).

func TestCreateAsKube(t *testing.T) {
	entries, err := os.ReadDir(filepath.Join("testdata", "in"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Run(strings.TrimSuffix(e.Name(), ".json"), func(t *testing.T) {
			var in, want networkingv1.IPAddress
			var status struct{ Kind, Message string }
			read(t, filepath.Join("testdata", "in", e.Name()), &in)
			read(t, filepath.Join("testdata", "want", e.Name()), &status)
			s := strategy{}
			s.PrepareForCreate(&in)
			var errs field.ErrorList
			for _, msg := range ValidateName(in.Name, false) {
				errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), in.Name, msg))
			}
			errs = append(errs, s.Validate(&in)...)
			if status.Kind == "Status" {
				got := ""
				if len(errs) > 0 {
					got = apierrors.NewInvalid(Kind().GroupVersionKind().GroupKind(), in.Name, errs).Error()
				}
				if got != status.Message {
					t.Errorf("got  %s\nwant %s", got, status.Message)
				}
				return
			}
			read(t, filepath.Join("testdata", "want", e.Name()), &want)
			if len(errs) > 0 || !equality.Semantic.DeepEqual(in.Spec, want.Spec) {
				t.Errorf("errors %v, spec %+v; kube stored spec %+v", errs, in.Spec, want.Spec)
			}
		})
	}
}

func read(t *testing.T, path string, into any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestUpdate: the parent reference is immutable.
func TestUpdate(t *testing.T) {
	ip := func(name string) *networkingv1.IPAddress {
		return &networkingv1.IPAddress{Spec: networkingv1.IPAddressSpec{ParentRef: &networkingv1.ParentReference{Resource: "services", Name: name}}}
	}
	if errs := (strategy{}).ValidateUpdate(ip("a"), ip("a")); len(errs) > 0 {
		t.Errorf("an unchanged parentRef: %v", errs)
	}
	if errs := (strategy{}).ValidateUpdate(ip("b"), ip("a")).ToAggregate(); errs == nil || !strings.Contains(errs.Error(), "spec.parentRef: Invalid value: null: field is immutable") {
		t.Errorf("a changed parentRef: %v", errs)
	}
}

// TestTable: kube's row, age included beyond the two columns.
func TestTable(t *testing.T) {
	ip := &networkingv1.IPAddress{Spec: networkingv1.IPAddressSpec{ParentRef: &networkingv1.ParentReference{Group: "Example.io", Resource: "Things", Namespace: "ns", Name: "t"}}}
	ip.Name = "10.0.0.1"
	ip.CreationTimestamp.Time = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	got := cells(ip, ip.CreationTimestamp.Add(90*time.Second))
	if want := []any{"10.0.0.1", "things.example.io/ns/t", "90s"}; !equality.Semantic.DeepEqual(got, want) {
		t.Errorf("cells %v, want %v", got, want)
	}
	if got := cells(&networkingv1.IPAddress{}, time.Time{})[1]; got != "<none>" {
		t.Errorf("no parentRef: %v", got)
	}
}
